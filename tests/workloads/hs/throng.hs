-- throng: many Haskell threads, and collections all the time. Three rings
-- of N threads each pass a token round (each blocked on an MVar between
-- two turns), while a thread builds and drops maps (the collector runs
-- every few milliseconds and moves the threads from list to list).
-- Prints "ready T" once all T threads it forked run.
-- Usage: throng N +RTS -N2 [-xn]
{-# LANGUAGE BangPatterns #-}
module Main (main) where

import Control.Concurrent
import Control.Monad
import qualified Data.Map.Strict as M
import System.Environment (getArgs)
import System.IO

ring :: Int -> MVar () -> IO ()
ring n started = do
  first <- newEmptyMVar
  let link 0 prev = return prev
      link k prev = do
        next <- newEmptyMVar
        _ <- forkIO $ forever $ do
          v <- takeMVar prev
          putMVar next $! (v + 1 :: Int)
        link (k - 1) next
  end <- link n first
  putMVar started ()
  forever $ do
    putMVar first 0
    v <- takeMVar end
    when (v /= n) $ error "ring: token lost"

churn :: Int -> IO ()
churn !i = do
  let m = M.fromList [(k, show k) | k <- [i .. i + 20000 :: Int]]
  when (M.size m < 0) $ error "churn"
  churn (i + 1)

main :: IO ()
main = do
  [n] <- map read <$> getArgs
  started <- newEmptyMVar
  forM_ [1 .. 3 :: Int] $ \_ -> forkIO (ring n started)
  replicateM_ 3 (takeMVar started)
  _ <- forkIO (churn 0)
  putStrLn ("ready " ++ show (3 * n + 3 + 1))
  hFlush stdout
  forever (threadDelay 1000000)
