-- capwait: a safe foreign call's thread, back from the call, waits for its
-- capability, which another thread holds (-N1) in a loop of unsafe calls
-- that neither allocates nor yields: it waits in resumeThread, the
-- runtime's scheduling, most of the time, and naps in the call the rest.
-- With "gc", main asks for a major collection instead (capwait_gc: a nap,
-- then hs_perform_gc, a safe call too), which waits for the capability
-- before it collects.
-- With "timer", a thread sleeps 1 ms at a time (threadDelay) meanwhile:
-- the timer manager, back from its poll, waits in resumeThread too.
--   main -> napLoop --safe--> usleep     (gc: capwait_gc -> performMajorGC)
--   hog (forkIO) -> spinLoop --unsafe--> cos
-- Usage: capwait SECONDS [gc|timer] (+RTS -N1)
{-# LANGUAGE BangPatterns #-}
module Main (main) where

import Control.Concurrent (forkIO, threadDelay, yield)
import Control.Monad (forever, when)
import Control.Exception (evaluate)
import Foreign.C.Types (CDouble (..), CInt (..), CUInt (..))
import GHC.Clock (getMonotonicTime)
import System.Environment (getArgs)

foreign import ccall safe "unistd.h usleep" c_usleep :: CUInt -> IO CInt
foreign import ccall safe "capwait_gc" c_gc :: CUInt -> IO ()
foreign import ccall unsafe "math.h cos" c_cos :: CDouble -> CDouble

spinLoop :: Int -> CDouble -> CDouble
spinLoop 0 !acc = acc
spinLoop n !acc = spinLoop (n - 1) (c_cos acc)
{-# NOINLINE spinLoop #-}

-- About 20 ms at a time holding the capability (a new argument each time:
-- not one constant evaluated once), then it lets it go.
hog :: Int -> IO ()
hog i = do
  x <- evaluate (spinLoop 1000000 (fromIntegral i))
  if x > 2 then print x else yield
  hog (i + 1)
{-# NOINLINE hog #-}

napLoop :: Bool -> Double -> IO ()
napLoop gc end = do
  if gc then c_gc 1000 else () <$ c_usleep 1000
  t <- getMonotonicTime
  if t < end then napLoop gc end else pure ()
{-# NOINLINE napLoop #-}

main :: IO ()
main = do
  secs : mode <- getArgs
  t0 <- getMonotonicTime
  _ <- forkIO (hog 0)
  when (mode == ["timer"]) $ () <$ forkIO (forever (threadDelay 1000))
  napLoop (mode == ["gc"]) (t0 + read secs)
