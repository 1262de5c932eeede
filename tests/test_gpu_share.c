/* core/gpu_share.h against stand-in sockets: golmpi's MPS probe says "ours" only for a live daemon
 * of this user (or root), "another user's" for a live one of someone else, "none" for no socket or
 * a killed daemon's file, and "not answering", within its deadline, for a daemon whose accept
 * queue is full; and the GPU keys count MIG slices of one GPU apart. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/gpu_share.h"
#include "tests/expect.h"

/* A listening stand-in daemon's socket at <dir>/control with the given backlog; its fd. */
static int listen_at(const char *dir, int backlog) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s/control", dir);
    unlink(addr.sun_path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        listen(fd, backlog) != 0) {
        perror("stand-in daemon");
        exit(2);
    }
    return fd;
}

/* A monotonic clock: the test stays out of MPI, whose plugins' thread-local storage
 * LeakSanitizer's tracer cannot walk (the sanitize stage looks for leaks in unit tests). */
static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Connections nobody accepts until the queue of the listener at <dir>/control is full; returns
 * how many sockets it opened (the caller closes them). */
static int fill_queue(const char *dir, int *held, int max) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s/control", dir);
    for (int i = 0; i < max; i++) {
        held[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
        if (connect(held[i], (struct sockaddr *)&addr, sizeof addr) != 0 && errno == EAGAIN)
            return i + 1;
    }
    fprintf(stderr, "could not fill the stand-in daemon's queue\n");
    exit(2);
}

static void probe_cases(void) {
    char dir[] = "/tmp/golmpi-mps-probe.XXXXXX", path[300];
    if (!mkdtemp(dir)) exit(2);
    snprintf(path, sizeof path, "%s/control", dir);

    EXPECT_EQ(gol_mps_probe(dir, 0.2), GOL_MPS_NONE, "no socket");
    EXPECT_EQ(gol_mps_probe("/nonexistent/golmpi", 0.2), GOL_MPS_NONE, "no directory");

    int fd = listen_at(dir, 8);
    EXPECT_EQ(gol_mps_probe(dir, 0.2), GOL_MPS_OURS, "a live daemon of this user");

    /* another user's daemon: the socket file is theirs (root can make it so; others skip) */
    if (geteuid() == 0) {
        EXPECT(chown(path, 65534, 65534) == 0, "chown the stand-in's socket");
        EXPECT_EQ(gol_mps_probe(dir, 0.2), GOL_MPS_OTHER_USER, "a live daemon of uid 65534");
        EXPECT(chown(path, 0, 0) == 0, "chown it back");
    } else {
        printf("skip: another user's daemon (needs root to give the socket away)\n");
    }

    /* a daemon that accepts nothing more: the probe gives up within its deadline */
    int held[4096];
    close(fd);
    fd = listen_at(dir, 0);
    const int nheld = fill_queue(dir, held, 4096);
    double t0 = now_s();
    EXPECT_EQ(gol_mps_probe(dir, 0.3), GOL_MPS_NO_ANSWER, "a daemon whose queue is full");
    double waited = now_s() - t0;
    EXPECT(waited >= 0.25 && waited < 2.0, "the probe waited %.2f s for a deadline of 0.3 s",
           waited);

    for (int i = 0; i < nheld; i++) close(held[i]);

    /* a killed daemon leaves its socket file, which refuses connections */
    close(fd);
    EXPECT_EQ(gol_mps_probe(dir, 0.2), GOL_MPS_NONE, "a killed daemon's socket file");

    /* a path too long for a socket address: the driver could not connect either */
    char longdir[200];
    memset(longdir, 'x', sizeof longdir - 1);
    longdir[0] = '/';
    longdir[sizeof longdir - 1] = '\0';
    EXPECT_EQ(gol_mps_probe(longdir, 0.2), GOL_MPS_NONE, "a pipe directory too long");

    EXPECT(strcmp(gol_mps_state_name(GOL_MPS_OTHER_USER), "another user's") == 0, "names");
    unlink(path);
    rmdir(dir);
}

static void sharer_cases(void) {
    enum { K = 48 };
    /* four ranks of a node: two on MIG slices of one GPU, two on one slice of another GPU */
    char keys[4][K] = {"MIG-1111", "MIG-2222", "MIG-3333", "MIG-3333"};
    int known = 0;
    EXPECT_EQ(gol_gpu_sharers(&keys[0][0], 4, K, 0, &known), 1, "a slice of its own");
    EXPECT_EQ(gol_gpu_sharers(&keys[0][0], 4, K, 1, &known), 1, "the other slice of that GPU");
    EXPECT_EQ(gol_gpu_sharers(&keys[0][0], 4, K, 2, &known), 2, "two ranks on one slice");
    EXPECT_EQ(known, 1, "every rank named its GPU");
    /* two MIG slices of one GPU: the same PCI bus id, UUIDs that differ in their last bytes */
    unsigned char uuid[2][16] = {{0x5a, 0x1c, 0x90, 0x01, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
                                  0x99, 0xaa, 0xbb, 0xcc, 0x01},
                                 {0x5a, 0x1c, 0x90, 0x01, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
                                  0x99, 0xaa, 0xbb, 0xcc, 0x02}};
    char slices[3][K];
    gol_gpu_uuid_key(uuid[0], slices[0], K);
    gol_gpu_uuid_key(uuid[1], slices[1], K);
    gol_gpu_uuid_key(uuid[1], slices[2], K);
    EXPECT(strcmp(slices[0], "GPU-5a1c9001-2233-4455-6677-8899aabbcc01") == 0, "a UUID's key: %s",
           slices[0]);
    EXPECT_EQ(gol_gpu_sharers(&slices[0][0], 3, K, 0, &known), 1, "a MIG slice of its own");
    EXPECT_EQ(gol_gpu_sharers(&slices[0][0], 3, K, 2, &known), 2, "two ranks on the other slice");
    keys[1][0] = '\0';
    EXPECT_EQ(gol_gpu_sharers(&keys[0][0], 4, K, 1, &known), 1, "a rank without a GPU shares none");
    EXPECT_EQ(known, 0, "a rank without a GPU: not all known");
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    alarm(20); /* a probe that blocks (a connect without its deadline) fails here, not at ctest's
                  limit */
    probe_cases();
    sharer_cases();
    if (failures) return 1;
    printf("test_gpu_share: PASS\n");
    return 0;
}
