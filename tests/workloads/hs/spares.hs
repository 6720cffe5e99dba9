-- spares: bursts of 16 Haskell threads, each in a safe foreign call
-- (usleep, 2 ms) at once, over and over, for SECONDS; prints "bursts N".
-- Each burst needs 16 OS threads to make the calls: the runtime starts
-- workers to run its capabilities meanwhile, and as the calls return,
-- those beyond the few spare workers it keeps per capability free their
-- Task and end (workerTaskStop, shutdownThread).
module Main (main) where
import Control.Concurrent
import Control.Monad
import Foreign.C.Types
import System.Environment (getArgs)
import Data.Time.Clock (diffUTCTime, getCurrentTime)

foreign import ccall safe "unistd.h usleep" c_usleep :: CUInt -> IO CInt

main :: IO ()
main = do
  [secs] <- map read <$> getArgs
  start <- getCurrentTime
  let loop n = do
        vs <- forM [1 .. 16 :: Int] $ \_ -> do
          v <- newEmptyMVar
          _ <- forkIO (c_usleep 2000 >> putMVar v ())
          return v
        mapM_ takeMVar vs
        t <- getCurrentTime
        if realToFrac (diffUTCTime t start) < (secs :: Double) then loop (n + 1) else return n
  n <- loop (0 :: Int)
  putStrLn ("bursts " ++ show n)
