-- ccs: pure Haskell work under known cost centres, for --stack ccs.
-- Each round spends 5 units of work in alpha, 3 in beta and 2 in gamma,
-- which only outer calls (so gamma's cost-centre stack is MAIN > outer >
-- gamma): about 50%, 30% and 20% of the time, outer itself next to none.
-- The loop is arithmetic on unboxed Ints: no allocation, so no GC.
-- Usage: ccs SECONDS (rounds until SECONDS of wall time have passed);
-- prints a checksum. Build with -prof (explicit SCCs, no -fprof-auto).
{-# LANGUAGE BangPatterns #-}
module Main (main) where

import Data.Bits (shiftL, shiftR, xor)
import GHC.Clock (getMonotonicTime)
import System.Environment (getArgs)

-- n rounds of xorshift.
spin :: Int -> Int -> Int
spin !n !x
  | n <= 0 = x
  | otherwise =
      let !a = x `xor` (x `shiftL` 13)
          !b = a `xor` (a `shiftR` 7)
          !c = b `xor` (b `shiftL` 17)
       in spin (n - 1) c
{-# NOINLINE spin #-}

alpha :: Int -> Int -> Int
alpha u s = {-# SCC "alpha" #-} spin (5 * u) s
{-# NOINLINE alpha #-}

beta :: Int -> Int -> Int
beta u s = {-# SCC "beta" #-} spin (3 * u) s
{-# NOINLINE beta #-}

gamma :: Int -> Int -> Int
gamma u s = {-# SCC "gamma" #-} spin (2 * u) s
{-# NOINLINE gamma #-}

outer :: Int -> Int -> Int
outer u s = {-# SCC "outer" #-} gamma u (s + 1)
{-# NOINLINE outer #-}

main :: IO ()
main = do
  [secs] <- map read <$> getArgs
  t0 <- getMonotonicTime
  let unit = 200000 -- a few ms: many rounds in a run
      loop :: Int -> Int -> IO Int
      loop !i !acc = do
        t <- getMonotonicTime
        if t - t0 >= secs
          then return acc
          else do
            -- Each result feeds the next call: nothing can be shared
            -- between rounds or left unevaluated.
            let !a = alpha unit (acc + i)
                !b = beta unit (a + i)
                !c = outer unit (b + i)
            loop (i + 1) c
  r <- loop 1 1
  print r
