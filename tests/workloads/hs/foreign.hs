-- foreign: a Haskell program whose C side starts OS threads of its own
-- (as a C library might): one computing in C (foreign_crunch), one asleep
-- in nanosleep, neither ever calling Haskell; meanwhile the main thread
-- computes fib in Haskell for SECONDS, yielding to the scheduler between
-- two (so that it goes through StgReturn, where ghc_foreign stops it, now
-- and then, not only at its end). It handles SIGUSR1 (doing
-- nothing), so that the runtime's signal handler runs on whichever thread
-- the signal is sent to: ghc_foreign parks c_spinner there.
{-# LANGUAGE ForeignFunctionInterface #-}
module Main (main, fib) where

import Control.Concurrent (yield)
import Control.Monad (unless)
import System.Environment (getArgs)
import System.Posix.Signals (Handler (Catch), installHandler, sigUSR1)

foreign import ccall unsafe "foreign_start" start :: IO ()
foreign import ccall unsafe "foreign_now" now :: IO Double

fib :: Int -> Int
{-# NOINLINE fib #-}
fib n = if n < 2 then n else fib (n - 1) + fib (n - 2)

main :: IO ()
main = do
  [secs] <- map read <$> getArgs
  _ <- installHandler sigUSR1 (Catch (return ())) Nothing
  start
  t0 <- now
  let loop :: Int -> IO ()
      loop acc = do
        let f = fib (22 + acc `mod` 3)
        t <- f `seq` now -- (forced, or nothing would ever need it)
        unless (t - t0 > secs) (yield >> loop (acc + f))
  loop 0
