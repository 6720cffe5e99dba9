-- dwarfnames: code that, built with -g, is named from DWARF: the methods
-- of two instances of one class (both "area" to DWARF), and workers (GHC
-- 9.6 on names their procedures after labels, "L7133701809754876057").
-- Usage: dwarfnames SECONDS.
{-# LANGUAGE BangPatterns #-}
module Main (main) where

import Control.Monad (forM_)
import Data.IORef
import System.Environment (getArgs)

class Shape a where
  area :: a -> Double

data Circle = Circle !Double
data Rect = Rect !Double !Double

instance Shape Circle where
  area (Circle r) = heavyArea r 3.14159

instance Shape Rect where
  area (Rect w h) = heavyArea w h

{-# NOINLINE heavyArea #-}
heavyArea :: Double -> Double -> Double
heavyArea a b = go (200000 :: Int) 0
  where
    go 0 !acc = acc
    go k !acc = go (k - 1) (acc + sqrt (a * b + fromIntegral k))

{-# NOINLINE totalArea #-}
totalArea :: Shape a => [a] -> Double
totalArea = foldr (\s t -> area s + t) 0

main :: IO ()
main = do
  args <- getArgs
  let secs = case args of { [s] -> read s; _ -> 2 } :: Double
  acc <- newIORef (0 :: Double)
  forM_ [1 .. round (secs * 10) :: Int] $ \i -> do
    modifyIORef' acc (+ totalArea [Circle (fromIntegral (i `mod` 5)) | _ <- [1 .. 20 :: Int]])
    modifyIORef' acc (+ totalArea [Rect 2 (fromIntegral (i `mod` 3)) | _ <- [1 .. 20 :: Int]])
  readIORef acc >>= print
