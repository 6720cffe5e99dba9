-- lazy: a left fold that builds a chain of thunks, then forces it, over
-- and over: while it is forced, the stack holds a long run of update
-- frames, each under a thunk the fold built (an application of (+), not
-- yet evaluated). Built with -O0, so that nothing makes the fold strict.
-- Usage: lazy SECONDS
import Data.IORef
import System.Environment (getArgs)
import Control.Monad (when)
import GHC.Clock (getMonotonicTime)

main :: IO ()
main = do
  [secs] <- map read <$> getArgs
  t0 <- getMonotonicTime
  total <- newIORef (0 :: Int)
  let loop i = do
        modifyIORef' total (+ foldl (+) 0 [1 .. 200000 + i `mod` 7])
        t <- getMonotonicTime
        when (t - t0 < secs) (loop (i + 1))
  loop (0 :: Int)
  readIORef total >>= print
