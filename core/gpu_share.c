#include "core/gpu_share.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/poll.h"

/* One connection attempt a nap, while the daemon's accept queue is full (EAGAIN). */
typedef struct {
    const struct sockaddr_un *addr;
    int result; /* 1 connected (or a live listener of another socket type), 0 refused, -1 full */
} mps_connect;

static int try_connect(void *arg, double since) {
    (void)since;
    mps_connect *c = arg;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        c->result = 0;
        return 1;
    }
    int rc = connect(fd, (const struct sockaddr *)c->addr, sizeof *c->addr);
    int err = errno;
    close(fd);
    /* EPROTOTYPE: a live listener of another socket type, still a daemon */
    if (rc == 0 || err == EPROTOTYPE || err == EINPROGRESS) {
        c->result = 1;
        return 1;
    }
    if (err == EAGAIN) {
        c->result = -1;
        return 0; /* its queue is full: a daemon that may yet accept, asked again */
    }
    c->result = 0; /* ECONNREFUSED (nobody listens: a killed daemon's file), ENOENT, ... */
    return 1;
}

gol_mps_state gol_mps_probe(const char *pipe_dir, double limit_s) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (snprintf(addr.sun_path, sizeof addr.sun_path, "%s/control", pipe_dir) >=
        (int)sizeof addr.sun_path)
        return GOL_MPS_NONE; /* a path the driver could not connect to either */
    struct stat st;
    if (lstat(addr.sun_path, &st) != 0) return GOL_MPS_NONE; /* its owner: whose daemon */
    mps_connect c = {.addr = &addr, .result = 0};
    if (!gol_poll_every(try_connect, &c, limit_s, 0.02)) return GOL_MPS_NO_ANSWER;
    if (c.result != 1) return GOL_MPS_NONE;
    /* A daemon started by root (the system-wide setup) starts each user's server on demand;
     * another user's daemon runs only that user's work. */
    return st.st_uid == geteuid() || st.st_uid == 0 ? GOL_MPS_OURS : GOL_MPS_OTHER_USER;
}

const char *gol_mps_state_name(gol_mps_state s) {
    switch (s) {
    case GOL_MPS_OURS:
        return "ours";
    case GOL_MPS_OTHER_USER:
        return "another user's";
    case GOL_MPS_NO_ANSWER:
        return "not answering";
    case GOL_MPS_NONE:
        break;
    }
    return "none";
}

void gol_gpu_uuid_key(const unsigned char uuid[16], char *key, size_t len) {
    const unsigned char *u = uuid;
    snprintf(key, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
}

int gol_gpu_sharers(const char *keys, int n, size_t key_len, int me, int *all_known) {
    const char *mine = keys + (size_t)me * key_len;
    int sharers = 1;
    *all_known = 1;
    for (int i = 0; i < n; i++) {
        const char *other = keys + (size_t)i * key_len;
        if (other[0] == '\0') *all_known = 0;
        if (i != me && mine[0] && strncmp(other, mine, key_len) == 0) sharers++;
    }
    return sharers;
}
