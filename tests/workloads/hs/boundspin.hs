-- boundspin: a bound thread (forkOS) computing in Haskell for SECONDS (a
-- float), while the main thread waits for it in takeMVar.
module Main (main) where

import Control.Concurrent
import Control.Exception (evaluate)
import GHC.Clock (getMonotonicTime)
import System.Environment (getArgs)

nfib :: Int -> Int
nfib n = if n < 2 then 1 else nfib (n - 1) + nfib (n - 2) + 1

-- (the argument varies, so that GHC does not compute nfib once for all)
spin :: Double -> Int -> IO Int
spin end acc = do
  r <- evaluate (nfib (24 + acc `mod` 2))
  t <- getMonotonicTime
  let acc' = acc + r
  if t < end then acc' `seq` spin end acc' else return acc'

main :: IO ()
main = do
  [secs] <- map read <$> getArgs
  start <- getMonotonicTime
  done <- newEmptyMVar
  _ <- forkOS (spin (start + secs) 0 >>= putMVar done)
  n <- takeMVar done
  print (n > 0)
