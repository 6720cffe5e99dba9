-- switch: THREADS Haskell threads computing on one capability, for
-- SECONDS. With +RTS -V0.001 -C0.001 the capability switches between them
-- every millisecond, so the OS thread running them is on another Haskell
-- thread, with another TSO and stack chunk, at nearly every sample a
-- profiler takes, and the collector, which runs every few milliseconds
-- here (with -A32m), moves their TSOs. Prints "ready" first.
-- Usage: switch SECONDS THREADS +RTS -N1 -V0.001 -C0.001 -A32m
module Main (main, spin) where

import Control.Concurrent (forkIO, threadDelay)
import Control.Monad (forM_)
import Data.IORef
import System.Environment (getArgs)
import System.IO

spin :: IORef Int -> Int -> IO ()
spin r i = do
  modifyIORef' r (+ length (show i))
  spin r (i + 1)
{-# NOINLINE spin #-}

main :: IO ()
main = do
  [secs, n] <- map read <$> getArgs
  forM_ [1 .. n] $ \_ -> newIORef 0 >>= \r -> forkIO (spin r 0)
  putStrLn "ready" >> hFlush stdout
  threadDelay (secs * 1000000)
