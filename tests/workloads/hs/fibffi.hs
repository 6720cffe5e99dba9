-- fibffi: Haskell compute (fib) and an unsafe foreign call (fibffi_spin),
-- alternating for SECONDS; built in every flavour the tests cover
-- (threaded or not, -O0 or -O2, with -g or without).
{-# LANGUAGE ForeignFunctionInterface #-}
module Main (main, fib) where

import Control.Monad (unless)
import System.Environment (getArgs)

foreign import ccall unsafe "fibffi_spin" spin :: Int -> IO Int
foreign import ccall unsafe "fibffi_now" now :: IO Double

fib :: Int -> Int
fib n = if n < 2 then n else fib (n - 1) + fib (n - 2)

main :: IO ()
main = do
  [secs] <- map read <$> getArgs
  t0 <- now
  let loop acc = do
        -- depends on acc, so that -O2 cannot compute it once for all
        let f = fib (22 + acc `mod` 3)
        r <- spin (f * 4)
        t <- now
        unless (t - t0 > secs) (loop (acc + r + f))
  loop 0
