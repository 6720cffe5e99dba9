-- setcaps: Haskell work on every capability while the number of
-- capabilities changes under it: 1, then 4, then 2, for SECONDS/3 each.
-- Usage: setcaps SECONDS (start with +RTS -N1). Build with -fno-omit-yields:
-- spinWork never allocates, and the RTS must be able to stop it.
module Main (main) where

import Control.Concurrent
import Control.Exception (evaluate)
import Control.Monad
import Data.IORef
import System.Environment (getArgs)

spinWork :: Int -> Int
spinWork n = sum [ (i * 7919) `mod` 1009 | i <- [1 .. n] ]
{-# NOINLINE spinWork #-}

main :: IO ()
main = do
  [secs] <- map read <$> getArgs
  stop <- newIORef False
  let worker i = forkIO $ do
        let go k = do
              _ <- evaluate (spinWork (20000 + k `mod` 7))
              -- let the bound main thread (which changes the capabilities)
              -- get its capability back
              yield
              s <- readIORef stop
              unless s (go (k + 1))
        go i
  mapM_ worker [0 .. 3 :: Int]
  let phase = round (secs / 3 * 1e6 :: Double)
  forM_ [1, 4, 2] $ \n -> do
    setNumCapabilities n
    threadDelay phase
  writeIORef stop True
  threadDelay 100000
  n <- getNumCapabilities
  putStrLn ("capabilities " ++ show n)
