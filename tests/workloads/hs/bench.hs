-- bench: the workload of `make bench`. A FIXED amount of work (not a fixed
-- time), so that its wall time is the figure: alone, under hsspy, under
-- perf, or built with -prof. Run with +RTS -N2; about 8 OS threads:
--   main (bound)         a worker
--   forkIO "w1", "w2"    workers
--   forkOS "os1", "os2"  workers, each on its own OS thread
--   forkIO "sleeper"     short sleeps through a safe call (its OS thread
--                        blocks, another worker takes the capability)
--   and the runtime's own: a worker per capability, the ticker, the IO and
--   timer managers.
-- The workers share one budget of work units, each about a millisecond of
-- CPU, and claim them one at a time until none are left; the unit's number
-- decides its kind, in turn: pure Haskell compute (nfib), allocation
-- (Data.Map inserts, so GC), busy C through unsafe calls (capability held),
-- busy C through a safe call (capability released). So every run does the
-- same work, the same amount of each kind, whichever threads the scheduler
-- favours, and the workers all finish within a unit of each other: the
-- wall time is that work over the CPU the program gets. (With a fixed share
-- per thread, the last one to finish decided, which varied by 20% from run
-- to run; with a kind per thread, the mix followed the scheduler: the
-- allocating thread did 145 to 955 of the 6000 units, and the collections
-- they cause, which stop both capabilities, made the wall time 3.3 to 5.3 s.)
-- Usage: bench [-v] [SCALE [ROUNDS]]. SCALE multiplies the work (1: 6000
-- units, about 3 s alone on 2 idle CPUs); ROUNDS repeats it (0: forever,
-- for long recordings). Prints "elapsed_ms N" per round (its own monotonic
-- clock, from the forks to the last join: excludes start-up and exit, and
-- -prof's file writing); -v also prints each thread's units and when it
-- finished, on stderr; -c what one unit of each kind costs, run alone.
{-# LANGUAGE ForeignFunctionInterface, BangPatterns #-}
module Main (main) where

import Control.Concurrent
import Control.Exception (evaluate)
import Control.Monad
import Data.IORef
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

-- One unit of each kind of work, about a millisecond of CPU each (on the
-- machine the README's figures come from); i varies the arguments so that
-- GHC cannot compute any of it once and for all.
computeUnit, allocUnit, unsafeUnit, safeUnit :: Int -> IO Int
computeUnit i = evaluate (nfib (27 + i `mod` 2))
allocUnit i = evaluate (buildMap i 3500)
-- ten short unsafe calls (0.1 ms each, like a hash or a copy), with a little
-- allocation between them, so this thread reaches points where the RTS can
-- stop it for a GC (a loop of unsafe calls alone never does, and stalls
-- every other capability at the next GC)
unsafeUnit i = foldM (\acc k -> do
  r <- spinUnsafe 90000
  s <- evaluate (sum [1 .. (i + k) `mod` 50])
  return (acc + r + s)) 0 [1 .. 10 :: Int]
safeUnit _ = spinSafe 900000

-- The kind of unit number b: the four in turn, so that any budget is split
-- between them the same way every time.
unitOf :: Int -> Int -> IO Int
unitOf b = case b `mod` 4 of
  0 -> computeUnit
  1 -> allocUnit
  2 -> unsafeUnit
  _ -> safeUnit

-- Claim units from the budget until none are left; how many this thread did.
worker :: IORef Int -> IO (Int, Int)
worker budget = go 0 0
  where
    go !n !acc = do
      b <- atomicModifyIORef' budget (\b -> (b - 1, b))
      if b > 0
        then unitOf b n >>= \r -> go (n + 1) (acc + r)
        else return (n, acc)

round' :: Bool -> Int -> IO Int
round' verbose scale = do
  budget <- newIORef (6000 * scale)
  done <- newIORef []
  t0 <- nowNs
  let finished name (n, r) = do
        t <- nowNs
        atomicModifyIORef' done (\l -> ((t, name, n) : l, ()))
        return r
      sleeper = foldM (\acc _ -> sleepSafe 500 >> return (acc + 1)) 0 [1 .. 400 * scale]
  dones <- forM [ (forkIO, "w1", worker budget)
                , (forkIO, "w2", worker budget)
                , (forkOS, "os1", worker budget)
                , (forkOS, "os2", worker budget)
                , (forkIO, "sleeper", (,) 0 <$> sleeper) ] $ \(fork, name, work) -> do
    v <- newEmptyMVar
    _ <- fork (work >>= finished name >>= evaluate >>= putMVar v)
    return v
  mine <- worker budget >>= finished "main"
  rs <- mapM takeMVar dones
  t1 <- nowNs
  when verbose $ readIORef done >>= mapM_ (\(t, name, n) ->
    hPrintf stderr "  %-8s %5d units, done at %.1f ms\n" (name :: String) n (ms t0 t)) . reverse
  printf "elapsed_ms %.1f\n" (ms t0 t1)
  hFlush stdout
  return (mine + sum rs)
  where
    ms :: Int -> Int -> Double
    ms a b = fromIntegral (b - a) / 1e6

-- -c: what one unit of each kind costs, run alone on the main thread.
calibrate :: IO ()
calibrate = forM_ [ ("compute", computeUnit), ("alloc", allocUnit)
                  , ("unsafe", unsafeUnit), ("safe", safeUnit) ] $ \(name, unit) -> do
  t0 <- nowNs
  r <- foldM (\acc i -> (+ acc) <$> unit i) 0 [1 .. 500]
  t1 <- nowNs
  printf "%-8s %.3f ms per unit (%d)\n" (name :: String)
    (fromIntegral (t1 - t0) / 500 / 1e6 :: Double) (r `mod` 10)

main :: IO ()
main = do
  args <- getArgs
  if "-c" `elem` args then calibrate else run args

run :: [String] -> IO ()
run args = do
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
