/* blocking - threads parked in blocking calls that a profiler's stops must
 * not disturb: read on a pipe, nanosleep, epoll_wait with a timeout and
 * accept on a socket, each in a loop for SECONDS. Every call that returns
 * EINTR, and every sleep or timeout that ends early, is counted; prints
 * "eintr N short N calls N" and exits 0 when nothing went wrong. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double end;
static atomic_int eintr, shortened, calls;
static int pipefd[2], lsock;
static int port;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *reader(void *a)
{
    char c;
    (void)a;
    while (now() < end) {
        ssize_t r = read(pipefd[0], &c, 1);
        calls++;
        if (r < 0 && errno == EINTR)
            eintr++;
        if (r == 0)
            break;
    }
    return NULL;
}

static void *writer(void *a)
{
    (void)a;
    while (now() < end + 0.1) {
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
        if (write(pipefd[1], "x", 1) < 0)
            break;
    }
    close(pipefd[1]);
    return NULL;
}

static void *sleeper(void *a)
{
    (void)a;
    while (now() < end) {
        struct timespec ts = {0, 20000000};
        double t0 = now();
        int r = nanosleep(&ts, NULL);
        calls++;
        if (r < 0 && errno == EINTR)
            eintr++;
        if (now() - t0 < 0.0199)
            shortened++;
    }
    return NULL;
}

static void *poller(void *a)
{
    int ep = epoll_create1(0);
    (void)a;
    while (now() < end) {
        struct epoll_event ev;
        double t0 = now();
        int r = epoll_wait(ep, &ev, 1, 30);
        calls++;
        if (r < 0 && errno == EINTR)
            eintr++;
        if (r == 0 && now() - t0 < 0.0299)
            shortened++;
    }
    close(ep);
    return NULL;
}

static void *acceptor(void *a)
{
    (void)a;
    for (;;) {
        int c = accept(lsock, NULL, NULL);
        calls++;
        if (c < 0 && errno == EINTR)
            eintr++;
        if (c >= 0)
            close(c);
        if (now() >= end)
            break;
    }
    return NULL;
}

static void *connector(void *a)
{
    (void)a;
    while (now() < end + 0.1) {
        struct timespec ts = {0, 40000000};
        nanosleep(&ts, NULL);
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
            close(s);
            break;
        }
        close(s);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t[6];
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;

    end = now() + (argc > 1 ? atof(argv[1]) : 3);
    if (pipe(pipefd) < 0)
        return 2;
    lsock = socket(AF_INET, SOCK_STREAM, 0);
    if (bind(lsock, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(lsock, 16) < 0 ||
        getsockname(lsock, (struct sockaddr *)&sa, &sl) < 0)
        return 2;
    port = ntohs(sa.sin_port);
    printf("ready\n");
    fflush(stdout);
    pthread_create(&t[0], NULL, reader, NULL);
    pthread_create(&t[1], NULL, writer, NULL);
    pthread_create(&t[2], NULL, sleeper, NULL);
    pthread_create(&t[3], NULL, poller, NULL);
    pthread_create(&t[4], NULL, acceptor, NULL);
    pthread_create(&t[5], NULL, connector, NULL);
    for (int i = 0; i < 6; i++)
        pthread_join(t[i], NULL);
    printf("eintr %d short %d calls %d\n", (int)eintr, (int)shortened, (int)calls);
    return eintr || shortened;
}
