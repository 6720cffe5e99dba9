-- quick: a GHC program over in a couple of milliseconds, before any
-- sample of hsspy's could read its runtime.
main :: IO ()
main = print (sum [1 .. 1000 :: Int])
