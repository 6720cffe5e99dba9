-- resume: a safe foreign call during which the runtime collects garbage
-- (rs_collect calls hs_perform_gc: a major collection), so that the
-- calling thread's stack chunk, its first (1 KB, an object the copying
-- collector moves), is somewhere else when the call returns. The code
-- back from the call reloads Sp (rbp) and SpLim from the chunk a few
-- instructions after resumeThread returns: until then they still point
-- where the chunk was.
--   main -> collectLoop -> collectOnce --safe--> rs_collect
-- Usage: resume SECONDS
{-# LANGUAGE ForeignFunctionInterface #-}
module Main (main) where

import Foreign.C.Types (CInt (..))
import GHC.Clock (getMonotonicTime)
import System.Environment (getArgs)

foreign import ccall safe "rs_collect" rsCollect :: CInt -> IO CInt

collectOnce :: Int -> IO Int
collectOnce i = do
  r <- rsCollect (fromIntegral i)
  pure $! fromIntegral r * 3 + 1
{-# NOINLINE collectOnce #-}

collectLoop :: Double -> Int -> IO Int
collectLoop end acc = do
  r <- collectOnce acc
  t <- getMonotonicTime
  if t < end then collectLoop end ((acc + r) `mod` 1000) else pure (acc + r)
{-# NOINLINE collectLoop #-}

main :: IO ()
main = do
  [secs] <- map read <$> getArgs
  t0 <- getMonotonicTime
  n <- collectLoop (t0 + secs) 0
  putStrLn ("resume done " ++ show (n >= 0))
