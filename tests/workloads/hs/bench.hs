-- bench: the workload of `make bench`. A FIXED amount of work (not a fixed
-- time), so that its wall time is the figure: alone, under hsspy, under
-- perf, or built with -prof. Run with +RTS -N2; about 8 OS threads:
--   main (bound)         pure Haskell compute (nfib), then waits
--   2 forkIO threads     pure compute; allocation (Data.Map inserts, so GC)
--   forkOS "unsafe"      busy C through an unsafe call (capability held)
--   forkOS "safe"        busy C through a safe call (capability released)
--   forkIO "sleeper"     short sleeps through a safe call (its OS thread
--                        blocks, another worker takes the capability)
--   and the runtime's own: a worker per capability, the ticker, the IO and
--   timer managers.
-- Usage: bench [-v] [SCALE [ROUNDS]]. SCALE multiplies the work (1: about 3-4 s
-- alone on 2 CPUs); ROUNDS repeats it (0: forever, for long recordings).
-- Prints "elapsed_ms N" per round (its own monotonic clock, from the forks
-- to the last join: excludes start-up and exit, and -prof's file writing);
-- -v also prints when each thread finished, on stderr.
{-# LANGUAGE ForeignFunctionInterface, BangPatterns #-}
module Main (main) where

import Control.Concurrent
import Control.Exception (evaluate)
import Control.Monad
import qualified Data.Map.Strict as M
import System.Environment (getArgs)
import System.IO
import Text.Printf (hPrintf, printf)

foreign import ccall unsafe "bench_spin" spinUnsafe :: Int -> IO Int
foreign import ccall safe "bench_spin" spinSafe :: Int -> IO Int
foreign import ccall safe "bench_sleep_us" sleepSafe :: Int -> IO ()
foreign import ccall unsafe "bench_now_ns" nowNs :: IO Int

nfib :: Int -> Int
nfib n = if n < 2 then 1 else nfib (n - 1) + nfib (n - 2) + 1

buildMap :: Int -> Int -> Int
buildMap salt n =
  M.foldl' (+) 0 (foldr (\k m -> M.insert ((k * 7919 + salt) `mod` n) k m) M.empty [1 .. n])

-- act 0, act 1, ... act (n-1), each result forced.
times :: Int -> (Int -> IO Int) -> IO Int
times n act = go 0 0
  where
    go !acc i
      | i >= n = return acc
      | otherwise = do
          r <- act i
          go (acc + r) (i + 1)

compute, alloc, unsafeC, safeC, sleeper :: Int -> IO Int
compute scale = times (150 * scale) (\i -> evaluate (nfib (29 + i `mod` 3)))
alloc scale = times (48 * scale) (\i -> evaluate (buildMap i 20000))
-- (the list allocates between calls, so this thread reaches points where the
-- RTS can stop it for a GC; a loop of unsafe calls alone never does. Each
-- call is short, about 0.1 ms, like a hash or a copy: a long unsafe call
-- stalls every other capability at the next GC, and with it the figures.)
unsafeC scale = times (12000 * scale) (\i -> do
  r <- spinUnsafe 100000
  s <- evaluate (sum [1 .. i `mod` 50])
  return (r + s))
safeC scale = times (800 * scale) (\_ -> spinSafe 1500000)
sleeper scale = times (800 * scale) (\_ -> sleepSafe 500 >> return 1)

round' :: Bool -> Int -> IO Int
round' verbose scale = do
  t0 <- nowNs
  let finished name r = do
        t <- nowNs
        when verbose $ hPrintf stderr "  %-8s done at %.1f ms\n" name (ms t0 t)
        return r
  dones <- forM [ (forkIO, "compute", compute), (forkIO, "alloc", alloc)
                , (forkOS, "unsafe", unsafeC), (forkOS, "safe", safeC)
                , (forkIO, "sleeper", sleeper) ] $ \(fork, name, work) -> do
    v <- newEmptyMVar
    _ <- fork (work scale >>= evaluate >>= finished name >>= putMVar v)
    return v
  mine <- compute scale >>= finished "main"
  rs <- mapM takeMVar dones
  t1 <- nowNs
  printf "elapsed_ms %.1f\n" (ms t0 t1)
  hFlush stdout
  return (mine + sum rs)
  where
    ms :: Int -> Int -> Double
    ms a b = fromIntegral (b - a) / 1e6

main :: IO ()
main = do
  args <- getArgs
  let verbose = "-v" `elem` args
      (scale, rounds) = case filter (/= "-v") args of
        [s] -> (read s, 1)
        [s, r] -> (read s, read r)
        _ -> (1, 1)
  if rounds <= 0
    then forever (round' verbose scale)
    else do
      rs <- replicateM rounds (round' verbose scale)
      -- the results are used, so no work can be optimised away
      when (sum rs == 42) (putStrLn "unlikely")
