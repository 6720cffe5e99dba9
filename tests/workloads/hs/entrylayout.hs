-- entrylayout: a program GHC 9.0 (-O2 -g) lays out with the loop of burn
-- after the program's entry, ZCMain_main_info (:Main.main): DWARF names
-- the loop "burn", and its module is Main's. A thread C starts
-- (entrylayout_c.c) calls hsWork 250 times, for about 1.5 s.
{-# LANGUAGE BangPatterns, ForeignFunctionInterface #-}
module Main (main) where
import Foreign.C.Types

foreign import ccall safe "start_c_thread" startC :: CInt -> IO ()
foreign import ccall safe "join_c_thread" joinC :: IO ()
foreign export ccall hsWork :: CInt -> IO CInt

{-# NOINLINE burn #-}
burn :: Int -> Int -> Int
burn seed n = go n seed where
  go 0 !acc = acc
  go k !acc = go (k-1) ((acc*31 + k) `rem` 1000003)

hsWork :: CInt -> IO CInt
hsWork x = let !r = burn (fromIntegral x) 20000 in return (fromIntegral (r `rem` 7))

main :: IO ()
main = do
  startC 250
  joinC
  putStrLn "done"
