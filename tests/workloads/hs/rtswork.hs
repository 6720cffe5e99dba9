-- rtswork: Haskell code that calls the runtime's C functions itself, not
-- through a foreign import. Usage: rtswork MODE SECONDS, MODE one of
--   mutvar  writes to many IORefs in the old generation: each first write
--           after a collection calls the write barrier, dirty_MUT_VAR;
--   sparks  sparks made with `par`: each one a call to newSpark;
--   calls   small functions calling each other: built with -prof
--           -fprof-auto, each entry a call to pushCostCentre (or
--           enterFunCCS).
-- Prints a checksum.
{-# LANGUAGE BangPatterns #-}
module Main (main) where

import Control.Monad (forM_)
import Data.IORef
import GHC.Clock (getMonotonicTime)
import GHC.Conc (par, pseq)
import System.Environment (getArgs)
import System.Mem (performMinorGC)

-- Write each IORef once, then collect: the collection leaves them clean
-- again, so every write of the next round calls dirty_MUT_VAR.
mutvarRound :: [IORef Int] -> Int -> IO ()
mutvarRound refs i = do
  forM_ refs $ \r -> writeIORef r i
  performMinorGC
{-# NOINLINE mutvarRound #-}

-- A spark for each element, which nothing waits for.
sparkRound :: Int -> Int
sparkRound n = go 0 0
  where
    go !acc k
      | k >= n = acc
      | otherwise = let x = k * k + acc in x `par` go (acc + k) (k + 1)
{-# NOINLINE sparkRound #-}

f1, f2, f3 :: Int -> Int
f1 x = if x < 0 then 0 else f2 (x + 1)
f2 x = f3 (x * 3)
f3 x = x `mod` 1000003
{-# NOINLINE f1 #-}
{-# NOINLINE f2 #-}
{-# NOINLINE f3 #-}

callRound :: Int -> Int -> Int
callRound n s = go 0 s
  where
    go !k !acc
      | k >= n = acc
      | otherwise = go (k + 1) (f1 acc)
{-# NOINLINE callRound #-}

main :: IO ()
main = do
  [mode, secs] <- getArgs
  t0 <- getMonotonicTime
  refs <- mapM newIORef [1 .. 100000 :: Int]
  performMinorGC
  let loop :: Int -> Int -> IO Int
      loop !i !acc = do
        t <- getMonotonicTime
        if t - t0 >= read secs
          then return acc
          else case mode of
            "mutvar" -> mutvarRound refs i >> loop (i + 1) (acc + 1)
            "sparks" -> let !v = sparkRound (10000 + i `mod` 7) in loop (i + 1) (acc + v)
            _ -> let !v = callRound 100000 (acc + i) in loop (i + 1) v
  r <- loop 1 1
  s <- sum <$> mapM readIORef (take 10 refs)
  print (r + s)
