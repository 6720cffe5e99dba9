-- demo: the program `make demo` profiles. Four kinds of work run side by
-- side on -N2, so every tag hsspy knows shows up in one profile:
--   * pure Haskell compute   (Demo.nfib, on the main thread)
--   * an unsafe C call        (demo_checksum, capability held)
--   * a safe C call           (demo_compress busy, demo_wait blocked)
--   * allocation-heavy work   (Demo.buildMap: Data.Map inserts, so GC runs)
{-# LANGUAGE ForeignFunctionInterface, BangPatterns #-}
module Main (main) where

import Control.Concurrent
import Control.Exception (evaluate)
import Control.Monad
import qualified Data.Map.Strict as M
import System.Environment (getArgs)

foreign import ccall unsafe "demo_checksum" checksum :: Int -> IO Int
foreign import ccall safe "demo_compress" compress :: Int -> IO Int
foreign import ccall safe "demo_wait" waitMs :: Int -> IO ()
foreign import ccall unsafe "demo_now" now :: IO Double

nfib :: Int -> Int
nfib n = if n < 2 then 1 else nfib (n - 1) + nfib (n - 2) + 1

buildMap :: Int -> Int
buildMap n = M.foldl' (+) 0 (foldr (\k m -> M.insert (k * 7919 `mod` n) k m) M.empty [1 .. n])

-- Run act 0, act 1, ... until the clock passes end. (The counter keeps
-- GHC from computing a constant expression once and for all.)
until' :: Double -> (Int -> IO ()) -> IO ()
until' end act = go 0
  where
    go i = do
      t <- now
      when (t < end) (act i >> go (i + 1))

main :: IO ()
main = do
  args <- getArgs
  let secs = case args of { [s] -> read s; _ -> 5 }
  end <- (+ secs) <$> now
  done <- newEmptyMVar
  let worker act = forkIO (until' end act >> putMVar done ())
  -- (the list allocates, so this loop reaches a point where the RTS can stop
  -- it for a GC; a loop of only unsafe calls never does, and stalls every
  -- other thread at the next GC: hsspy shows that as [gc] waitForGcThreads)
  _ <- worker (\i -> void (checksum 3000000) >> void (evaluate (sum [1 .. i `mod` 50])))
  _ <- worker (\_ -> void (compress 2000000) >> waitMs 5)
  _ <- worker (\i -> void (evaluate (buildMap (20000 + i `mod` 7))))
  until' end (\i -> void (evaluate (nfib (24 + i `mod` 3))))
  replicateM_ 3 (takeMVar done)
