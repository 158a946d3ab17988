/*
 * tcp_stream: a raw TCP stream measured the way bench/bw.c measures MPI
 * bandwidth, the ceiling for MPI over TCP between the same endpoints.
 * Per window 64 (-W) messages of SIZE bytes written with send() (all of each),
 * read by the receiver with recv() into one buffer, then a 1-byte ack;
 * samples of about MS milliseconds (20), best and median. No MPI: built with
 * `cc -O2 tcp_stream.c` (bench/net-compare does it).
 *
 *   tcp_stream -l ADDR PORT [-m SIZE] [-W WINDOW]          receiver
 *   tcp_stream ADDR PORT [-m SIZE] [-W WINDOW] [-s SAMPLES] [-t MS]   sender; prints
 *       `tcp-bw SIZE BEST_MBps MEDIAN_MBps`
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WINDOW 64

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, 0);
        if (k <= 0)
            die("send");
        p += k;
        n -= (size_t)k;
    }
}

static void recv_all(int fd, char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = recv(fd, p, n, 0);
        if (k <= 0)
            die("recv");
        p += k;
        n -= (size_t)k;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    bool listener = false;
    size_t size = 1 << 20;
    int samples = 7, ms = 20, window = WINDOW, opt;
    while ((opt = getopt(argc, argv, "lm:s:t:W:")) != -1) {
        switch (opt) {
        case 'l': listener = true; break;
        case 'm': {
            char *end;
            size = strtoull(optarg, &end, 0);
            if (*end == 'k' || *end == 'K')
                size <<= 10;
            else if (*end == 'm' || *end == 'M')
                size <<= 20;
            break;
        }
        case 's': samples = atoi(optarg); break;
        case 'W': window = atoi(optarg); break;
        case 't': ms = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: tcp_stream [-l] ADDR PORT [-m SIZE] [-W N] [-s N] [-t MS]\n");
            return 2;
        }
    }
    if (optind + 2 != argc || samples < 1 || samples > 1000 || size < 1 || window < 1 || window > WINDOW) {
        fprintf(stderr, "usage: tcp_stream [-l] ADDR PORT [-m SIZE] [-W N] [-s N] [-t MS]\n");
        return 2;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[optind + 1]))};
    if (inet_pton(AF_INET, argv[optind], &sa.sin_addr) != 1) {
        fprintf(stderr, "tcp_stream: %s is not an IPv4 address\n", argv[optind]);
        return 2;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (fd < 0)
        die("socket");
    char *buf = malloc(size);
    if (!buf)
        die("malloc");
    memset(buf, 'x', size);
    if (listener) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1))
            die("bind/listen");
        int c = accept(fd, NULL, NULL);
        if (c < 0)
            die("accept");
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        long iters;
        /* per sample: the iteration count, then its windows */
        for (;;) {
            ssize_t k = recv(c, &iters, sizeof(iters), MSG_WAITALL);
            if (k == 0)
                break;
            if (k != sizeof(iters))
                die("recv");
            for (long i = 0; i < iters; i++) {
                for (int w = 0; w < window; w++)
                    recv_all(c, buf, size);
                send_all(c, "a", 1);
            }
        }
        close(c);
        close(fd);
        free(buf);
        return 0;
    }
    for (int tries = 0; connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0; tries++) {
        if (tries > 100)
            die("connect");
        close(fd);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        usleep(50000);
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    double *res = calloc((size_t)samples, sizeof(double));
    long iters = 1;
    for (int s = -1; s < samples; s++) {
        send_all(fd, (char *)&iters, sizeof(iters));
        double t0 = now_us();
        for (long i = 0; i < iters; i++) {
            char ack;
            for (int w = 0; w < window; w++)
                send_all(fd, buf, size);
            recv_all(fd, &ack, 1);
        }
        double t = now_us() - t0;
        if (s < 0) {
            iters = (long)(ms * 1000.0 / (t > 1 ? t : 1));
            if (iters < 1)
                iters = 1;
            continue;
        }
        res[s] = (double)size * window * (double)iters / t;
    }
    qsort(res, (size_t)samples, sizeof(double), cmp_double);
    printf("tcp-bw %zu %.1f %.1f\n", size, res[samples - 1], res[samples / 2]);
    close(fd);
    free(res);
    free(buf);
    return 0;
}
