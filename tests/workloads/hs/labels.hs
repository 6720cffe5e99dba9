-- labels: eight Haskell threads labelled waiter-1 .. waiter-8, each
-- blocked on an MVar of its own, and one that allocates without end (the
-- labels, ByteArray#s on the heap from GHC 9.6 on, move with each
-- collection). Prints "ready", then runs for SECONDS.
-- Usage: labels SECONDS (-threaded).
module Main (main) where

import Control.Concurrent
import Control.Exception (evaluate)
import Control.Monad
import GHC.Conc (labelThread)
import System.Environment (getArgs)
import System.IO

main :: IO ()
main = do
  args <- getArgs
  let secs = case args of { [s] -> read s; _ -> 10 } :: Double
  forM_ [1 .. 8 :: Int] $ \i -> do
    m <- newEmptyMVar :: IO (MVar ())
    t <- forkIO (takeMVar m)
    labelThread t ("waiter-" ++ show i)
  putStrLn "ready"
  hFlush stdout
  -- (Integer arithmetic: a collection every few milliseconds)
  let fib :: Int -> Integer
      fib n = if n < 2 then toInteger n else fib (n - 1) + fib (n - 2)
  t <- forkIO (forever (void (evaluate (fib 27))))
  threadDelay (round (secs * 1e6))
  killThread t
