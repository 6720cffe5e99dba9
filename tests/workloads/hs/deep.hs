-- deep: a Haskell thread that stops, deep inside a known recursion, in a
-- blocking safe foreign call, so its STG stack stays still for as long as a
-- test needs to look at it (with hsspy, and with the debug RTS's own stack
-- printer through gdb). The recursion mixes three functions, thunks being
-- forced (update frames) and a catch frame. Usage: deep DEPTH SECONDS
-- [unsafe]; with "unsafe" the blocking call is an unsafe one, so the thread
-- keeps its capability and its Sp lives in a register, not in its TSO.
{-# LANGUAGE ForeignFunctionInterface #-}
module Main (main) where

import Control.Exception (SomeException, catch, evaluate)
import System.Environment (getArgs)
import System.IO.Unsafe (unsafePerformIO)

foreign import ccall safe "deep_block" block :: Int -> IO Int
foreign import ccall unsafe "deep_block" blockUnsafe :: Int -> IO Int

alpha :: Int -> Int -> IO Int
alpha secs 0
  | secs < 0 = blockUnsafe (negate secs)
  | otherwise = block secs
alpha secs n = do
  r <- beta secs (n - 1)
  return $! r + 1
{-# NOINLINE alpha #-}

beta :: Int -> Int -> IO Int
beta secs n = do
  r <- gamma secs n
  return $! r * 2
{-# NOINLINE beta #-}

gamma :: Int -> Int -> IO Int
gamma secs n
  | n > 0 && n `mod` 5 == 0 = do
      -- a thunk whose evaluation goes on down: forcing it pushes an update frame
      let t = unsafePerformIO (alpha secs (n - 1))
      r <- evaluate t
      return $! r + 7
  | otherwise = do
      r <- alpha secs n
      return $! r - 3
{-# NOINLINE gamma #-}

main :: IO ()
main = do
  args <- getArgs
  let (depth, secs) = case args of
        [d, s] -> (read d, read s)
        [d, s, "unsafe"] -> (read d, negate (read s))
        _ -> (30, 30)
  r <- alpha secs depth `catch` \e -> do
         putStrLn ("caught: " ++ show (e :: SomeException))
         return 0
  print r
