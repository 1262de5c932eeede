/* The CUDA kernels' thread bodies (edge rows, interior walk with its row window and row-chunk
 * striding) run on the host against a per-cell reference, so the index arithmetic of the kernels
 * is checked on machines without a GPU too. test_cuda_kernels checks the real launches. */
#define GOLMPI_LIFE_CUDA_HOST_EMULATION 1
#include "kernels/life_cuda.cu"

#include <cstdio>
#include <vector>

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng() {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Mismatching cells of one generation of a width x height torus or dead grid. */
static long check(int64_t width, int64_t height, int torus, gol_rule rule, unsigned grid_y) {
    int64_t nw = (width + 63) / 64;
    std::vector<uint8_t> cells((size_t)(width * height));
    for (auto &c : cells) c = rng() & 1;
    std::vector<uint64_t> src((size_t)((height + 2) * nw), 0), dst(src.size(), ~0ull);
    for (int64_t r = 0; r < height; r++)
        for (int64_t x = 0; x < width; x++)
            if (cells[(size_t)(r * width + x)]) src[(size_t)((r + 1) * nw + x / 64)] |= 1ull << (x % 64);
    if (torus)
        for (int64_t j = 0; j < nw; j++) {
            src[(size_t)j] = src[(size_t)(height * nw + j)];
            src[(size_t)((height + 1) * nw + j)] = src[(size_t)(nw + j)];
        }
    gol_cuda_grid g = {height, nw, width, torus, rule};
    emulate_life_edges(g, src.data(), dst.data());
    emulate_life_rows(g, src.data(), dst.data(), 2, height, grid_y);
    long bad = 0;
    for (int64_t r = 0; r < height; r++)
        for (int64_t x = 0; x < nw * 64; x++) {
            int got = (int)((dst[(size_t)((r + 1) * nw + x / 64)] >> (x % 64)) & 1), want = 0;
            if (x < width) {
                int n = 0;
                for (int dy = -1; dy <= 1; dy++)
                    for (int dx = -1; dx <= 1; dx++) {
                        if (!dy && !dx) continue;
                        int64_t yy = r + dy, xx = x + dx;
                        if (torus) {
                            yy = (yy + height) % height;
                            xx = (xx + width) % width;
                        } else if (yy < 0 || yy >= height || xx < 0 || xx >= width) {
                            continue;
                        }
                        n += cells[(size_t)(yy * width + xx)];
                    }
                want = cells[(size_t)(r * width + x)] ? (rule.survive >> n) & 1 : (rule.birth >> n) & 1;
            }
            bad += got != want; /* padding bits must come out 0 as well */
        }
    return bad;
}

extern "C" void gol_die_cuda(const char *file, int line, const char *call, const char *, const char *) {
    fprintf(stderr, "unexpected CUDA call in host emulation: %s at %s:%d\n", call, file, line);
    abort();
}

int main() {
    const int64_t widths[] = {1, 2, 5, 63, 64, 65, 77, 128, 130, 200};
    const int64_t heights[] = {1, 2, 3, 4, 17, 23, 40};
    const gol_rule rules[] = {{GOL_RULE_CONWAY_BIRTH, GOL_RULE_CONWAY_SURVIVE},
                              {(1u << 3) | (1u << 6), GOL_RULE_CONWAY_SURVIVE},
                              {1u << 2, 0},
                              {0xaa, 0xaa},
                              {1u, 1u << 8}}; /* B0/S8: births from nothing, up to the padding */
    int cases = 0, failed = 0;
    for (int64_t w : widths)
        for (int64_t h : heights)
            for (int torus = 0; torus < 2; torus++)
                for (const gol_rule &rule : rules)
                    for (unsigned gy : {1u, 2u, 65535u}) {
                        long bad = check(w, h, torus, rule, gy);
                        cases++;
                        if (bad) {
                            failed++;
                            printf("FAIL %lldx%lld %s B%x/S%x grid.y=%u: %ld cells\n", (long long)w,
                                   (long long)h, torus ? "torus" : "dead", rule.birth, rule.survive,
                                   gy, bad);
                        }
                    }
    printf("%d of %d emulated kernel cases failed\n", failed, cases);
    return failed ? 1 : 0;
}
