/* Names of the configuration's enums and the output paths it implies. */
#include "core/config.h"

#include <stdio.h>
#include <string.h>

const char *config_boundary_name(gol_boundary b) {
    return b == GOL_BOUNDARY_DEAD ? "dead" : "torus";
}

const char *config_backend_name(gol_backend_kind b) {
    switch (b) {
    case GOL_BACKEND_CPU: return "cpu";
    case GOL_BACKEND_CUDA: return "cuda";
    default: return "auto";
    }
}

const char *config_frame_format_name(gol_frame_format f) {
    return f == GOL_FRAME_PACKED ? "packed-lsb" : "u8";
}

void path_split(const char *path, char *dir, size_t len, const char **name) {
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, len, ".");
        *name = path;
    } else if (slash == path) {
        snprintf(dir, len, "/");
        *name = slash + 1;
    } else {
        snprintf(dir, len, "%.*s", (int)(slash - path), path);
        *name = slash + 1;
    }
}

void config_output_base(const gol_config *cfg, char *base, size_t len) {
    size_t n = strlen(cfg->output);
    if (n >= 3 && strcmp(cfg->output + n - 3, ".h5") == 0) n -= 3;
    if (n >= len) n = len - 1;
    memcpy(base, cfg->output, n);
    base[n] = '\0';
}
