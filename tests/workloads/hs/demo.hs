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
import Data.Time.Clock.POSIX (getPOSIXTime)
import System.Environment (getArgs)

foreign import ccall unsafe "demo_checksum" checksum :: Int -> IO Int
foreign import ccall safe "demo_compress" compress :: Int -> IO Int
foreign import ccall safe "demo_wait" waitMs :: Int -> IO ()

nfib :: Int -> Int
nfib n = if n < 2 then 1 else nfib (n - 1) + nfib (n - 2) + 1

buildMap :: Int -> Int
buildMap n = M.foldl' (+) 0 (foldr (\k m -> M.insert (k * 7919 `mod` n) k m) M.empty [1 .. n])

now :: IO Double
now = realToFrac <$> getPOSIXTime

until' :: Double -> IO () -> IO ()
until' end act = do
  t <- now
  when (t < end) (act >> until' end act)

main :: IO ()
main = do
  args <- getArgs
  let secs = case args of { [s] -> read s; _ -> 5 }
  end <- (+ secs) <$> now
  done <- newEmptyMVar
  let worker act = forkIO (until' end act >> putMVar done ())
  _ <- worker (void (checksum 3000000))
  _ <- worker (void (compress 2000000) >> waitMs 5)
  _ <- worker (void (evaluate (buildMap 20000)))
  until' end (void (evaluate (nfib 22)))
  replicateM_ 3 (takeMVar done)
