-- crowd: one capability shared by many: 20 Haskell threads that yield
-- every few microseconds (the capability's current TSO changes all the
-- time) and an OS thread in a safe foreign call that spins in C (each
-- capture reads that capability too, at its own stop).
-- Usage: crowd SECONDS +RTS -N1
{-# LANGUAGE ForeignFunctionInterface, BangPatterns #-}
module Main (main) where

import Control.Concurrent
import Control.Monad
import Foreign.C.Types (CInt (..))
import System.Environment (getArgs)

foreign import ccall safe "crowd_spin" crowdSpin :: CInt -> IO CInt

yielder :: Int -> IO ()
yielder k = go 0
  where
    go :: Int -> IO ()
    go !i = do
      when (i `mod` 64 == 0) yield
      go (i + k)
{-# NOINLINE yielder #-}

main :: IO ()
main = do
  [secs] <- map read <$> getArgs
  _ <- forkIO $ forever $ void (crowdSpin 2000000)
  forM_ [1 .. 20] $ \k -> forkIO (yielder k)
  threadDelay (secs * 1000000)
  putStrLn "crowd done"
