-- callback: Haskell calling C through a safe call, the C code calling
-- Haskell back through a "wrapper" FunPtr, twice nested:
--   outerLoop --safe--> cb_drive --callback--> middleWork
--   middleWork --safe--> cb_drive --callback--> innerWork
-- Each callback runs on the calling OS thread, through a new InCall of
-- its Task. cb_drive spins in C (cb_spin) after each callback, so that
-- samples fall in C under each level, and in the Haskell code of each.
-- Usage: callback SECONDS
{-# LANGUAGE ForeignFunctionInterface, BangPatterns #-}
module Main (main) where

import Control.Monad (when)
import Data.IORef
import Foreign.C.Types (CInt (..))
import Foreign.Ptr (FunPtr)
import GHC.Clock (getMonotonicTime)
import System.Environment (getArgs)

foreign import ccall "wrapper" mkCallback :: (CInt -> IO CInt) -> IO (FunPtr (CInt -> IO CInt))
foreign import ccall safe "cb_drive" cbDrive :: FunPtr (CInt -> IO CInt) -> CInt -> IO CInt

innerFib :: Int -> Int
innerFib n = if n < 2 then n else innerFib (n - 1) + innerFib (n - 2)
{-# NOINLINE innerFib #-}

middleFib :: Int -> Int
middleFib n = if n < 2 then n else middleFib (n - 1) + middleFib (n - 2)
{-# NOINLINE middleFib #-}

-- The second level's callback: Haskell work.
innerWork :: CInt -> IO CInt
innerWork i = pure $! fromIntegral (innerFib (19 + fromIntegral (i `mod` 2)))
{-# NOINLINE innerWork #-}

-- The first level's callback: Haskell work, then a safe call of its own
-- that calls innerWork back.
middleWork :: IORef (FunPtr (CInt -> IO CInt)) -> CInt -> IO CInt
middleWork inner i = do
  let !m = middleFib (19 + fromIntegral (i `mod` 2))
  f <- readIORef inner
  r <- cbDrive f 2
  pure $! fromIntegral m + r
{-# NOINLINE middleWork #-}

outerLoop :: FunPtr (CInt -> IO CInt) -> Double -> IO ()
outerLoop f end = do
  r <- cbDrive f 3
  when (r < 0) $ print r
  t <- getMonotonicTime
  when (t < end) $ outerLoop f end
{-# NOINLINE outerLoop #-}

main :: IO ()
main = do
  [secs] <- map read <$> getArgs
  inner <- mkCallback innerWork
  ref <- newIORef inner
  middle <- mkCallback (middleWork ref)
  t0 <- getMonotonicTime
  outerLoop middle (t0 + secs)
  putStrLn "callback done"
