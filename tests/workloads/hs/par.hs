-- par: allocation-heavy Haskell work on every capability at once (one
-- forkOn thread per capability), for SECONDS: the garbage collector runs
-- often and every capability is busy. Usage: par SECONDS +RTS -N4.
module Main (main) where

import Control.Concurrent
import Control.Exception (evaluate)
import Control.Monad
import qualified Data.Map.Strict as M
import Data.Time.Clock (diffUTCTime, getCurrentTime)
import System.Environment (getArgs)

churn :: Int -> Int
churn seed = M.foldl' (+) 0 (foldr (\k -> M.insert ((k * 7919 + seed) `mod` 5003) k) M.empty [1 .. 4000])
{-# NOINLINE churn #-}

worker :: Double -> Int -> IO ()
worker secs seed = do
  start <- getCurrentTime
  let go i = do
        _ <- evaluate (churn (seed + i))
        t <- getCurrentTime
        when (realToFrac (diffUTCTime t start) < secs) (go (i + 1))
  go 0

main :: IO ()
main = do
  [secs] <- map read <$> getArgs
  n <- getNumCapabilities
  dones <- forM [0 .. n - 1] $ \c -> do
    v <- newEmptyMVar
    _ <- forkOn c (worker secs c >> putMVar v ())
    return v
  mapM_ takeMVar dones
