-- gcchurn: one Haskell thread inserting into a Data.Map of 400,000 keys,
-- which with a small allocation area (+RTS -A256k) collects some two
-- thousand times a second; run with -N2, the other capability's workers
-- have nothing to do: idle, whatever the collections do around them.
--   main -> churnLoop -> churn
-- Usage: gcchurn SECONDS
{-# LANGUAGE BangPatterns #-}
module Main (main) where

import qualified Data.Map.Strict as M
import GHC.Clock (getMonotonicTime)
import System.Environment (getArgs)

churn :: M.Map Int Int -> Int -> M.Map Int Int
churn m i = M.insert ((i * 7919) `mod` 400000) i m
{-# NOINLINE churn #-}

churnLoop :: Double -> M.Map Int Int -> Int -> IO (M.Map Int Int)
churnLoop end !m !i
  | i `mod` 10000 == 0 = do
      t <- getMonotonicTime
      if t > end then pure m else churnLoop end (churn m i) (i + 1)
  | otherwise = churnLoop end (churn m i) (i + 1)
{-# NOINLINE churnLoop #-}

main :: IO ()
main = do
  [secs] <- getArgs
  t0 <- getMonotonicTime
  let !big = M.fromList [(k, k) | k <- [1 .. 400000 :: Int]]
  m <- churnLoop (t0 + read secs) big 0
  print (M.size m)
