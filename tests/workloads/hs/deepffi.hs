-- deepffi: a -threaded GHC program that computes in Haskell and every
-- half millisecond or so makes a short unsafe call whose C takes 12 KB of
-- stack (deepffi_c.c: deep_frame), alternately from Main.callA and
-- Main.callB, for SECONDS (argument): a C stack much deeper, now and then
-- and briefly, than in the samples before, as a call of printf makes it.
{-# LANGUAGE ForeignFunctionInterface, BangPatterns #-}
module Main (main) where

import Control.Monad (unless)
import Data.Time.Clock.POSIX (getPOSIXTime)
import System.Environment (getArgs)

foreign import ccall unsafe "deep_frame" deepFrame :: Int -> IO Int

{-# NOINLINE spin #-}
spin :: Int -> Int -> Int
spin !acc 0 = acc
spin !acc n = spin (acc * 31 + n `mod` 7) (n - 1)

{-# NOINLINE callA #-}
callA :: Int -> IO Int
callA n = (+ 1) <$> deepFrame n

{-# NOINLINE callB #-}
callB :: Int -> IO Int
callB n = (+ 2) <$> deepFrame n

loop :: Double -> Int -> Int -> IO Int
loop until !k !acc = do
  let !s = spin acc 150000
  r <- if even k then callA s else callB s
  now <- realToFrac <$> getPOSIXTime
  if now >= until then return r else loop until (k + 1) (acc + r)

main :: IO ()
main = do
  [secs] <- map read <$> getArgs
  start <- realToFrac <$> getPOSIXTime
  r <- loop (start + secs) 0 0
  unless (r == 42) (return ())
