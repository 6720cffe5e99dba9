-- stopwake: a thread blocked in an unsafe foreign call (a poll on a pipe,
-- waking every millisecond: a profiler must stop it to sample it, its Sp
-- is in a register) that one of those stops wakes for real, then works and
-- sleeps elsewhere:
--   Main.await -> sw_await (poll)
--   Main.work  -> sw_crunch (CPU in C, no system call, WORK seconds)
--   Main.rest  -> sw_doze (nanosleep, REST seconds)
-- A C thread (stopwake-watch) spins on the main thread's state in /proc
-- and writes to the pipe once it sees it stopped by a tracer (the third
-- time: not at a first look): resumed, its
-- poll (restarted by the kernel) returns at once, and it goes on without
-- going back to sleep in the call it was stopped in. Prints "ready" once
-- the watcher runs, then "woken while stopped" (or "woken late" when it saw
-- no stop in 5 s). Usage: stopwake WORK REST.
{-# LANGUAGE ForeignFunctionInterface #-}
module Main (main, await, work, rest) where

import System.Environment (getArgs)

foreign import ccall unsafe "sw_start" start :: IO ()
foreign import ccall unsafe "sw_await" swAwait :: IO Int
foreign import ccall unsafe "sw_crunch" swCrunch :: Double -> IO Int
foreign import ccall unsafe "sw_doze" swDoze :: Double -> IO Int

await :: IO Int
await = swAwait
{-# NOINLINE await #-}

work :: Double -> IO Int
work = swCrunch
{-# NOINLINE work #-}

rest :: Double -> IO Int
rest = swDoze
{-# NOINLINE rest #-}

main :: IO ()
main = do
  [w, r] <- map read <$> getArgs
  start
  a <- await
  b <- work w
  c <- rest r
  print (a + b + c)
