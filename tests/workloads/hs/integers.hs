-- integers: Integer arithmetic on numbers of a few hundred bits, for
-- SECONDS: products and remainders, which GHC's Integer hands to GMP's
-- mpn_* routines (hand-written assembly without unwind information: most
-- push the registers they use, and use rbp as any other) through unsafe
-- foreign calls, some straight from Haskell, some through GMP's C.
-- mulLoop and remLoop are the Haskell functions the samples must show
-- above them. Usage: integers SECONDS
module Main (main, mulLoop, remLoop) where

import Control.Exception (evaluate)
import Control.Monad (when)
import Data.IORef
import System.CPUTime (getCPUTime)
import System.Environment (getArgs)

mulLoop :: Integer -> Int -> Integer
mulLoop x n = foldl (\a k -> (a * x + fromIntegral k) `mod` (x * x * x + 1)) 3 [1 .. n]
{-# NOINLINE mulLoop #-}

remLoop :: Integer -> Int -> Integer
remLoop x n = foldl (\a k -> (a * x + fromIntegral k) `rem` (x * x + 12345678901234567)) 7 [1 .. n]
{-# NOINLINE remLoop #-}

main :: IO ()
main = do
  [s] <- map read <$> getArgs
  sink <- newIORef (0 :: Integer)
  let limit = round (s * 1e12 :: Double) :: Integer
      go i = do
        a <- evaluate (mulLoop (2 ^ (300 + i `mod` 7) + 1) 2000)
        b <- evaluate (remLoop (2 ^ (200 + i `mod` 5) + 1) 2000)
        modifyIORef' sink (+ (a + b) `mod` 1000)
        t <- getCPUTime
        when (t < limit) (go (i + 1 :: Int))
  go 0
  readIORef sink >>= \v -> when (v < 0) (print v)
