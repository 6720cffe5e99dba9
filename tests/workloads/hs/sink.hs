-- sink: one function's recursion, DEPTH levels deep (a frame a level, which
-- hsspy folds as a recursion), blocked at its bottom in deep_block (from
-- deep_c.c: says "ready", then sleeps SECONDS) through a safe foreign call,
-- or an unsafe one (then the thread keeps its capability, and its Sp is
-- known only by unwinding the C frames); low-rbp: an unsafe one to C code
-- that holds 64 KB below Sp in rbp while it sleeps (sink_c.c).
-- Usage: sink DEPTH SECONDS safe|unsafe|low-rbp
{-# LANGUAGE ForeignFunctionInterface #-}
module Main (main) where

import System.Environment (getArgs)

foreign import ccall safe "deep_block" block :: Int -> IO Int
foreign import ccall unsafe "deep_block" blockUnsafe :: Int -> IO Int
foreign import ccall unsafe "sink_block_low_rbp" blockLowRbp :: Int -> IO Int

sink :: String -> Int -> Int -> IO Int
sink kind secs 0 = case kind of
    "unsafe" -> blockUnsafe secs
    "low-rbp" -> blockLowRbp secs
    _ -> block secs
sink kind secs n = do
    r <- sink kind secs (n - 1)
    return $! r + n
{-# NOINLINE sink #-}

main :: IO ()
main = do
    [depth, secs, kind] <- getArgs
    r <- sink kind (read secs) (read depth)
    print r
