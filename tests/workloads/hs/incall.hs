-- incall: an OS thread that C code starts (named c_incaller), which spends
-- 3 ms in busy C code of its own (incall_busy), then 3 ms calling Haskell
-- (the foreign export incallWork), over and over, for SECONDS. Between its
-- calls it keeps the Task the runtime made for it, with no call in it.
-- Usage: incall SECONDS (build with -threaded, incall_c.c).
{-# LANGUAGE BangPatterns, ForeignFunctionInterface #-}
module Main (main) where

import Foreign.C.Types
import System.Environment (getArgs)

foreign import ccall safe "incall_start" startC :: CDouble -> IO ()
foreign import ccall safe "incall_join" joinC :: IO ()
foreign export ccall incallWork :: CInt -> IO CInt

{-# NOINLINE burn #-}
burn :: Int -> Int -> Int
burn seed n = go n seed
  where
    go 0 !acc = acc
    go k !acc = go (k - 1) ((acc * 31 + k) `rem` 1000003)

incallWork :: CInt -> IO CInt
incallWork x = let !r = burn (fromIntegral x) 20000 in return (fromIntegral (r `rem` 7))

main :: IO ()
main = do
  args <- getArgs
  let secs = case args of { [s] -> read s; _ -> 2 } :: Double
  startC (realToFrac secs)
  joinC
