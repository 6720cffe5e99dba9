-- nap: a Haskell thread that naps over and over in a foreign call (2 ms
-- nanosleeps, for SECONDS), three known Haskell functions deep. It runs
-- between any two samples a profiler takes, yet is nearly always blocked
-- when one is taken. Prints "ready" first. Usage: nap SECONDS
-- safe|unsafe|epoll: with "unsafe" the call keeps the capability and the
-- thread's Sp lives in a register; with "epoll" the safe call waits in
-- epoll_wait for a second at a time (a C library's event loop), a call a
-- stop would break: the thread is never stopped. (outer, middle and inner
-- are exported so that GHC keeps them apart.)
{-# LANGUAGE ForeignFunctionInterface #-}
module Main (main, outer, middle, inner) where

import Control.Monad (when)
import System.Environment (getArgs)

foreign import ccall safe "nap_c" napSafe :: Int -> IO Int
foreign import ccall unsafe "nap_c" napUnsafe :: Int -> IO Int
foreign import ccall safe "nap_epoll" napEpoll :: Int -> IO Int
foreign import ccall unsafe "nap_ready" ready :: IO Int

outer :: String -> Int -> IO Int
outer u n = do
  r <- middle u n
  return $! r + 1
{-# NOINLINE outer #-}

middle :: String -> Int -> IO Int
middle u n = do
  r <- inner u n
  return $! r * 2
{-# NOINLINE middle #-}

inner :: String -> Int -> IO Int
inner u n = do
  r <- case u of
    "unsafe" -> napUnsafe 2000
    "epoll" -> napEpoll 1000000
    _ -> napSafe 2000
  return $! r - n
{-# NOINLINE inner #-}

main :: IO ()
main = do
  [secs, mode] <- getArgs
  _ <- ready
  let naps = read secs * (if mode == "epoll" then 1 else 500) :: Int
      go k acc = when (k < naps) $ do
        r <- outer mode k
        go (k + 1) (acc + r)
  go 0 (0 :: Int)
