// SPDX-License-Identifier: MIT
// A C++ program on the installed libshoal (tests/test_install.sh): the headers' extern "C"
// guards let it link (0.1 compiled and then failed to link: mangled names), and the ABI
// check, the version and the 0.2 state calls work from C++. Prints one line; exit 0.
#include <shoal/shoal.h>

#include <cstdio>
#include <vector>

int main()
{
    shoal_error err;
    if (shoal_abi_check(&err) != SHOAL_OK) {
        std::fprintf(stderr, "install_cxx: %s\n", err.message);
        return 1;
    }
    shoal_sim_desc desc = shoal_sim_desc_for(SHOAL_MODEL_AVERAGE);
    desc.boid_count = 500;
    shoal_sim *sim = nullptr;
    std::vector<float> rows(desc.boid_count * SHOAL_STATE_COLUMNS);
    if (shoal_sim_create(&desc, &sim, &err) || shoal_sim_draw_state(sim, &err) ||
        shoal_sim_step(sim, 10, &err) ||
        shoal_sim_get_rows(sim, rows.data(), desc.boid_count, &err)) {
        std::fprintf(stderr, "install_cxx: %s\n", err.message);
        shoal_sim_destroy(sim);
        return 1;
    }
    shoal_stats st;
    if (shoal_stats_compute(rows.data(), desc.boid_count, nullptr, &st, &err)) {
        std::fprintf(stderr, "install_cxx: %s\n", err.message);
        shoal_sim_destroy(sim);
        return 1;
    }
    std::printf("C++ on libshoal %s (headers %s): %zu boids, t = %.4f s, polarisation %.6f\n",
                shoal_version(), SHOAL_VERSION_STRING, shoal_sim_count(sim), shoal_sim_time(sim),
                st.polarisation);
    shoal_sim_destroy(sim);
    return 0;
}
