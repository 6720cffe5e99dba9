-- resumed: computations an asynchronous exception suspended, resumed. Each
-- round forks a thread that starts a deep recursion in a thunk, which
-- `timeout` interrupts: the runtime freezes the thread's frames into
-- closures on the heap (raiseAsync), an AP_STACK_NOUPD for each 32 KB
-- stack chunk from the newest, and an AP_STACK for the oldest part, up to
-- the thunk's update frame. Then the main thread demands the thunk, which
-- copies the frames back onto its own stack, a word at a time: the
-- AP_STACK's, then each AP_STACK_NOUPD's (some 4000 words each).
--   main -> rounds -> demand -> [thunk] -> AP_STACK -> deep -> deep -> ...
-- Build it with -fno-omit-yields, so that `deep` yields to the timeout.
-- Usage: resumed DEPTH WORK SECONDS   (WORK: iterations of a loop at each
-- of the DEPTH levels; a round's `timeout` is 3 ms)
module Main (main) where

import Control.Concurrent (forkIO)
import Control.Concurrent.MVar (newEmptyMVar, putMVar, takeMVar)
import Control.Exception (evaluate)
import GHC.Clock (getMonotonicTime)
import System.Environment (getArgs)
import System.IO (BufferMode (..), hSetBuffering, stdout)
import System.Timeout (timeout)

-- Some work at each level, so that a level takes a while.
work :: Int -> Int -> Int
work 0 acc = acc
work i acc = work (i - 1) (acc * 33 + i)
{-# NOINLINE work #-}

-- Not a tail call: a frame per level.
deep :: Int -> Int -> Int
deep _ 0 = 0
deep w n = (work w n `mod` 3) + n + deep w (n - 1)
{-# NOINLINE deep #-}

demand :: Int -> IO Int
demand x = do
    v <- evaluate x
    return $! v + 1
{-# NOINLINE demand #-}

rounds :: Int -> Int -> Double -> Int -> IO ()
rounds d w end r = do
    let x = deep w (d + r)
    done <- newEmptyMVar
    _ <- forkIO (timeout 3000 (evaluate x) >>= putMVar done)
    _ <- takeMVar done
    v <- demand x
    t <- getMonotonicTime
    if t < end then v `seq` rounds d w end (r + 1) else print v
{-# NOINLINE rounds #-}

main :: IO ()
main = do
    [d, w, secs] <- getArgs
    hSetBuffering stdout LineBuffering
    t0 <- getMonotonicTime
    putStrLn "ready"
    rounds (read d) (read w) (t0 + read secs) 0
