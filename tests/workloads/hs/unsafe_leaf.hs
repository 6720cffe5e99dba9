-- unsafe_leaf: a -threaded GHC program that spends its time in a C function
-- called through an unsafe foreign import, for SECONDS (argument).
{-# LANGUAGE ForeignFunctionInterface #-}
module Main (main) where

import Control.Monad (unless)
import System.Environment (getArgs)
import Data.Time.Clock.POSIX (getPOSIXTime)

foreign import ccall unsafe "unsafe_leaf_spin" spinC :: Int -> IO Int

loop :: Double -> IO ()
loop until = do
  _ <- spinC 2000000
  now <- realToFrac <$> getPOSIXTime
  unless (now >= until) (loop until)

main :: IO ()
main = do
  [secs] <- map read <$> getArgs
  start <- realToFrac <$> getPOSIXTime
  loop (start + secs)
