-- calib: one Haskell thread cycling through four kinds of work, timing each
-- with the same monotonic clock, so it knows its true split of wall time:
--   unsafe busy C   (calib_busy through an unsafe import)
--   Haskell compute (a non-allocating loop, so no GC)
--   safe busy C     (calib_busy through a safe import)
--   safe sleep      (calib_sleep through a safe import: blocked, not idle)
--   and with `idle`, a wait (threadDelay: its OS thread has nothing to do)
-- Usage: calib SECONDS [idle]. Prints "truth unsafe U haskell H safe S"
-- (fractions of the measured total) when done, then with `idle` a line
-- "idle I".
{-# LANGUAGE ForeignFunctionInterface, BangPatterns #-}
module Main (main) where

import Control.Concurrent (threadDelay)
import Control.Monad (when)
import Data.IORef
import System.Environment (getArgs)
import Text.Printf (printf)

foreign import ccall unsafe "calib_busy" busyUnsafe :: Int -> IO ()
foreign import ccall safe "calib_busy" busySafe :: Int -> IO ()
foreign import ccall safe "calib_sleep" sleepSafe :: Int -> IO ()
foreign import ccall unsafe "calib_now" now :: IO Int

-- Haskell work until `us` microseconds have passed: arithmetic on unboxed
-- Ints, looking at the clock only every 2^14 iterations.
haskellFor :: Int -> IO Int
haskellFor us = do
  t0 <- now
  let go :: Int -> Int -> IO Int
      go !acc !i
        | i `mod` 16384 == 0 = do
            t <- now
            if t - t0 >= us then return acc else go (acc * 1103515245 + i) (i + 1)
        | otherwise = go (acc * 1103515245 + i) (i + 1)
  go 1 1
{-# NOINLINE haskellFor #-}

timed :: IORef Int -> IO a -> IO ()
timed ref act = do
  t0 <- now
  _ <- act
  t1 <- now
  modifyIORef' ref (+ (t1 - t0))

main :: IO ()
main = do
  args <- getArgs
  let secs = read (head args) :: Double
      idle = drop 1 args == ["idle"]
  u <- newIORef 0
  h <- newIORef 0
  s <- newIORef 0
  d <- newIORef 0
  start <- now
  let end = start + round (secs * 1e6 :: Double)
      loop = do
        timed u (busyUnsafe 7000)
        timed h (haskellFor 5000)
        timed s (busySafe 6000)
        timed s (sleepSafe 4000)
        when idle (timed d (threadDelay 4000))
        t <- now
        if t < end then loop else return ()
  loop
  stop <- now
  [uu, hh, ss, dd] <- mapM readIORef [u, h, s, d]
  let total = fromIntegral (stop - start) :: Double
      f x = fromIntegral x / total
  printf "truth unsafe %.4f haskell %.4f safe %.4f\n" (f uu) (f hh) (f ss)
  when idle (printf "idle %.4f\n" (f dd))
