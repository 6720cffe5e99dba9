-- nest: calls into Haskell nested DEPTH deep on one OS thread. nestLevel n
-- makes a safe call of nest_drive, which spins in C (nest_spin) and calls
-- nestLevel (n-1) back through a "wrapper" FunPtr, a new InCall each time;
-- nestLevel 0 is Haskell work (nestFib). Every level is sampled: in
-- nest_spin with 1 to DEPTH calls around it, in nestFib with DEPTH.
-- Usage: nest SECONDS DEPTH
{-# LANGUAGE ForeignFunctionInterface #-}
module Main (main, nestFib) where

import Control.Monad (when)
import Data.IORef
import Foreign.C.Types (CInt (..))
import Foreign.Ptr (FunPtr)
import GHC.Clock (getMonotonicTime)
import System.Environment (getArgs)
import System.IO.Unsafe (unsafePerformIO)

foreign import ccall "wrapper" mkCallback :: (CInt -> IO CInt) -> IO (FunPtr (CInt -> IO CInt))
foreign import ccall safe "nest_drive" nestDrive :: FunPtr (CInt -> IO CInt) -> CInt -> IO CInt

nestFib :: Int -> Int
nestFib n = if n < 2 then n else nestFib (n - 1) + nestFib (n - 2)
{-# NOINLINE nestFib #-}

callback :: IORef (FunPtr (CInt -> IO CInt))
callback = unsafePerformIO (newIORef undefined)
{-# NOINLINE callback #-}

fibArg :: IORef Int
fibArg = unsafePerformIO (newIORef 24)
{-# NOINLINE fibArg #-}

nestLevel :: CInt -> IO CInt
nestLevel 0 = do
  k <- readIORef fibArg
  pure $! fromIntegral (nestFib k)
nestLevel n = do
  f <- readIORef callback
  nestDrive f (n - 1)
{-# NOINLINE nestLevel #-}

nestLoop :: CInt -> Double -> IO ()
nestLoop depth end = do
  r <- nestLevel depth
  when (r < 0) $ print r
  t <- getMonotonicTime
  when (t < end) $ nestLoop depth end
{-# NOINLINE nestLoop #-}

main :: IO ()
main = do
  [s, d] <- getArgs
  cb <- mkCallback nestLevel
  writeIORef callback cb
  t0 <- getMonotonicTime
  nestLoop (read d) (t0 + read s)
  putStrLn "nest done"
