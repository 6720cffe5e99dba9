-- deadlock: a program that hangs the way real ones do (build it with
-- -fno-omit-yields: evaluateForever's loop does not allocate, and without
-- yield points it would keep every other thread from running). Two threads each
-- hold one MVar and wait for the other's (a deadlock), one thread waits in
-- STM for a TVar nobody will change, one waits on a thunk another thread
-- is busy evaluating (a black hole). main keeps everything reachable (so
-- the RTS does not see the deadlock and kill them) and sleeps. Prints
-- "ready" once all of them are stuck.
module Main (main, lockA, lockB, waitForFlag, forceShared, evaluateForever) where

import Control.Concurrent
import Control.Concurrent.STM
import Control.Exception (evaluate)
import Control.Monad
import Data.IORef
import System.IO

lockA :: MVar () -> MVar () -> MVar () -> IO ()
lockA mine theirs ready = do
  takeMVar mine
  putMVar ready ()
  threadDelay 100000
  takeMVar theirs -- never: lockB holds it
  putMVar mine ()
{-# NOINLINE lockA #-}

lockB :: MVar () -> MVar () -> MVar () -> IO ()
lockB mine theirs ready = do
  takeMVar mine
  putMVar ready ()
  threadDelay 100000
  takeMVar theirs -- never: lockA holds it
  putMVar mine ()
{-# NOINLINE lockB #-}

waitForFlag :: TVar Bool -> MVar () -> IO ()
waitForFlag flag ready = do
  putMVar ready ()
  v <- atomically $ readTVar flag >>= \f -> check f >> return f
  print v
{-# NOINLINE waitForFlag #-}

-- Never finishes, but allocates: the RTS can preempt it, and then marks the
-- thunk being evaluated as a black hole.
evaluateForever :: Int -> Int
evaluateForever n = length (takeWhile (>= 0) [n ..])
{-# NOINLINE evaluateForever #-}

forceShared :: Int -> MVar () -> IO ()
forceShared shared ready = do
  putMVar ready ()
  _ <- evaluate shared -- blocks on the black hole the other thread made
  return ()
{-# NOINLINE forceShared #-}

main :: IO ()
main = do
  hSetBuffering stdout LineBuffering
  a <- newEmptyMVar
  b <- newEmptyMVar
  putMVar a ()
  putMVar b ()
  r1 <- newEmptyMVar
  r2 <- newEmptyMVar
  r3 <- newEmptyMVar
  r4 <- newEmptyMVar
  flag <- newTVarIO False
  -- a thunk that one thread evaluates (forever) and another then needs
  let shared = evaluateForever 1
  _ <- forkIO (lockA a b r1)
  _ <- forkIO (lockB b a r2)
  _ <- forkIO (waitForFlag flag r3)
  _ <- forkIO (void (evaluate shared))
  threadDelay 200000
  _ <- forkIO (forceShared shared r4)
  mapM_ takeMVar [r1, r2, r3, r4]
  threadDelay 500000
  putStrLn "ready"
  -- Keep the MVars, the TVar and the thunk reachable (matching the tuple
  -- does not force its parts), so the RTS sees no deadlock.
  keep <- newIORef (a, b, flag, shared)
  forever $ do
    threadDelay 1000000
    (_, _, _, _) <- readIORef keep
    return ()
