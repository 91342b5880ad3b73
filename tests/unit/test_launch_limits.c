/* The CUDA backend's two launch-limit guards as pure functions (kernels/launch_limits.h), so
 * they are checked without a GPU: the deterministic matmul's grid.y (M at most 262,140 rows)
 * and GPT decode attention's dynamic shared memory (the opt-in above 48 KiB, n_ctx 12,288;
 * a one-line error above the device's opt-in maximum). */
#include "../../kernels/launch_limits.h"

#include "../test_assert.h"

static const size_t H200_OPTIN = 232448; /* cudaDevAttrMaxSharedMemoryPerBlockOptin, sm_90 */

int main(void) {
    char why[320];
    /* matmul: 4 rows a block in grid.y, at most 65535 blocks */
    why[0] = 0;
    EXPECT(launch_det_gemm_check(1, 1, 1, why, sizeof why) == 0, "1 x 1 refused: %s", why);
    EXPECT(launch_det_gemm_check(262140, 768, 768, why, sizeof why) == 0, "M = 262140 (grid.y 65535) refused: %s", why);
    EXPECT(launch_det_gemm_check(262137, 50257, 768, why, sizeof why) == 0, "M = 262137 refused: %s", why);
    why[0] = 0;
    EXPECT(launch_det_gemm_check(262141, 768, 64, why, sizeof why) == -1, "M = 262141 (grid.y 65536) accepted");
    EXPECT_MSG(why, "M=262141 N=768 K=64");
    EXPECT_MSG(why, "grid.y = 65536");
    EXPECT_MSG(why, "M at most 262140");
    EXPECT(strchr(why, '\n') == NULL, "not one line: %s", why);
    EXPECT(launch_det_gemm_check(2147483647, 8, 8, why, sizeof why) == -1, "M = INT_MAX accepted");
    EXPECT(launch_det_gemm_check(0, 0, 0, why, sizeof why) == 0, "an empty product refused");

    /* decode: n_ctx floats of shared memory */
    size_t bytes = 0;
    EXPECT(launch_decode_smem_check(1024, H200_OPTIN, &bytes, why, sizeof why) == 0 && bytes == 4096,
           "n_ctx 1024: not the default 48 KiB (%zu bytes)", bytes);
    EXPECT(launch_decode_smem_check(12288, H200_OPTIN, &bytes, why, sizeof why) == 0 && bytes == 49152,
           "n_ctx 12288 (exactly 48 KiB) needs the opt-in (%zu bytes)", bytes);
    EXPECT(launch_decode_smem_check(12289, H200_OPTIN, &bytes, why, sizeof why) == 1 && bytes == 49156,
           "n_ctx 12289 does not ask for the opt-in (%zu bytes)", bytes);
    EXPECT(launch_decode_smem_check(58112, H200_OPTIN, &bytes, why, sizeof why) == 1,
           "n_ctx 58112 (the H200's 227 KiB exactly) refused: %s", why);
    why[0] = 0;
    EXPECT(launch_decode_smem_check(58113, H200_OPTIN, &bytes, why, sizeof why) == -1, "n_ctx 58113 accepted");
    EXPECT_MSG(why, "n_ctx=58113");
    EXPECT_MSG(why, "232452 bytes");
    EXPECT_MSG(why, "opt-in maximum of 232448");
    EXPECT_MSG(why, "n_ctx at most 58112");
    EXPECT(strchr(why, '\n') == NULL, "not one line: %s", why);
    /* a device without the opt-in (its maximum is the default): above 48 KiB is an error */
    EXPECT(launch_decode_smem_check(12289, 48 * 1024, &bytes, why, sizeof why) == -1,
           "n_ctx 12289 accepted where the opt-in maximum is 48 KiB");
    return test_finish("test_launch_limits");
}
