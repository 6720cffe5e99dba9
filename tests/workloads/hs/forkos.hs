-- forkos: OS threads born and dying all the time on the Haskell side: keep
-- 8 bound threads (forkOS) alive, each living a few milliseconds, for
-- SECONDS; prints "forked N".
module Main (main) where

import Control.Concurrent
import Control.Exception (evaluate)
import Control.Monad
import Data.IORef
import System.Environment (getArgs)
import Data.Time.Clock (diffUTCTime, getCurrentTime)

main :: IO ()
main = do
  [secs] <- map read <$> getArgs
  count <- newIORef (0 :: Int)
  start <- getCurrentTime
  let life k = do
        _ <- evaluate (sum [1 .. 2000 + k `mod` 3000 :: Int])
        atomicModifyIORef' count (\c -> (c + 1, ()))
      round' = do
        dones <- forM [1 .. 8 :: Int] $ \k -> do
          v <- newEmptyMVar
          _ <- forkOS (life k >> putMVar v ())
          return v
        mapM_ takeMVar dones
      loop = do
        round'
        t <- getCurrentTime
        when (realToFrac (diffUTCTime t start) < (secs :: Double)) loop
  loop
  n <- readIORef count
  putStrLn ("forked " ++ show n)
