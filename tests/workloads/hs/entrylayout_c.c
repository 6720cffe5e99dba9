/* entrylayout_c.c - the C side of entrylayout.hs: a thread that spends
 * 3 ms in its own C, then 3 ms calling hsWork, ITERS times. */
#include <pthread.h>
#include <time.h>
#include <stdint.h>
extern int hsWork(int);
static uint64_t now_ns(void){ struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return (uint64_t)t.tv_sec*1000000000ull+t.tv_nsec; }
volatile uint64_t sink;
static void c_busy(int ms){ uint64_t d=now_ns()+(uint64_t)ms*1000000; while(now_ns()<d) sink++; }
static void *thr(void *arg){
  int iters = *(int*)arg; int r = 0;
  for (int i = 0; i < iters; i++) {
    c_busy(3);
    uint64_t d = now_ns() + 3000000;
    while (now_ns() < d) r += hsWork(r);
  }
  sink += r;
  return 0;
}
static pthread_t th; static int n;
void start_c_thread(int iters){ n = iters; pthread_create(&th, 0, thr, &n); }
void join_c_thread(void){ pthread_join(th, 0); }
