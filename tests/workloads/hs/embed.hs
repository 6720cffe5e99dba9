-- embed: Haskell work called from C through a foreign export, on an OS
-- thread that C code started (embed_c.c), the runtime initialised there;
-- the program's main thread only waits for it. It allocates (Data.Map
-- inserts), so the runtime collects garbage on that thread too.
{-# LANGUAGE ForeignFunctionInterface #-}
module Embed (embedWork) where

import Data.IORef
import qualified Data.Map.Strict as M
import Foreign.C.Types (CDouble (..))
import GHC.Clock (getMonotonicTime)

foreign export ccall "embed_work" embedWork :: CDouble -> IO ()

build :: Int -> Int
build n = M.foldl' (+) 0 (foldr (\k m -> M.insert ((k * 7919) `mod` n) k m) M.empty [1 .. n])
{-# NOINLINE build #-}

embedWork :: CDouble -> IO ()
embedWork secs = do
  t0 <- getMonotonicTime
  total <- newIORef (0 :: Int)
  let loop i = do
        modifyIORef' total (+ build (20000 + i `mod` 7))
        t <- getMonotonicTime
        if t - t0 < realToFrac secs then loop (i + 1) else pure ()
  loop (0 :: Int)
