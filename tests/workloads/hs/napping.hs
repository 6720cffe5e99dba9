-- napping: many bound threads (forkOS) napping in safe foreign calls, 5 ms
-- at a time, while a Haskell thread computes (maps, collections) and calls
-- C unsafely: each nap a sleep and a wake-up (a switch of the thread, on a
-- ring of the per-CPU events), hundreds a tick.
-- Prints "ready" once the nappers are forked.
-- Usage: napping N SECONDS +RTS -N2
{-# LANGUAGE ForeignFunctionInterface #-}
module Main (main) where

import Control.Concurrent
import Control.Monad
import Data.IORef
import qualified Data.Map.Strict as M
import Foreign.C.Types (CDouble (..), CInt (..))
import System.Environment (getArgs)
import System.IO

foreign import ccall safe "napping_nap" napNap :: CInt -> IO ()
foreign import ccall unsafe "napping_compute" napCompute :: CInt -> IO CDouble

napper :: IO ()
napper = forever (napNap 5000)
{-# NOINLINE napper #-}

mapSum :: Int -> Int
mapSum n = M.foldl' (+) 0 (M.fromList [(k, k * 2) | k <- [1 .. n]])
{-# NOINLINE mapSum #-}

busy :: IORef Int -> IO ()
busy r = forever $ do
  modifyIORef' r (+ mapSum 20000)
  void (napCompute 100000)

main :: IO ()
main = do
  [n, secs] <- map read <$> getArgs
  replicateM_ n (forkOS napper)
  r <- newIORef 0
  _ <- forkIO (busy r)
  putStrLn "ready" >> hFlush stdout
  threadDelay (secs * 1000000)
  readIORef r >>= \v -> when (v < 0) (print v)
