// The register blocks that matmul_reg.cl and matmul_staged.cl share, #included by both once
// their macros are set: a work-group of MDIMC x NDIMC work-items (tx along N, ty along M)
// computes an MWG x NWG tile of C, each work-item a WPTM x WPTN block of it. A block's rows are
// vectors of VWM rows, MDIMC vectors apart in the tile, and its columns vectors of VWN columns,
// NDIMC apart: the work-items of a warp read consecutive vectors of a local tile's row.
#define WPTM (MWG / MDIMC)
#define WPTN (NWG / NDIMC)

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
typedef float float1;
typedef CAT(float, VWM) floatM;
typedef CAT(float, VWN) floatN;

// Private-array <-> vector helpers, one per width (vstore1/vload1 do not exist).
#define TOARR_1(v, t) ((t)[0] = (v))
#define TOARR_2(v, t) vstore2((v), 0, (t))
#define TOARR_4(v, t) vstore4((v), 0, (t))
#define TOARR_8(v, t) vstore8((v), 0, (t))

// The tile row of block row i, and the tile column of block column j, of work-item (tx, ty).
#define BLOCK_ROW(i) ((((i) / VWM) * MDIMC + ty) * VWM + (i) % VWM)
#define BLOCK_COL(j) ((((j) / VWN) * NDIMC + tx) * VWN + (j) % VWN)

// acc[WPTM][WPTN] += the outer product of this work-item's floats of `a_row` (one K row of the
// local A tile, MWG floats) and of `b_row` (the B tile's, NWG floats), read in vectors.
#define MULTIPLY_TILE_ROW(a_row, b_row)                                                       \
  do {                                                                                        \
    float a_[WPTM], b_[WPTN];                                                                 \
    _Pragma("unroll") for (int i_ = 0; i_ < WPTM / VWM; ++i_)                                 \
        CAT(TOARR_, VWM)(*(__local const floatM*)&(a_row)[(i_ * MDIMC + ty) * VWM],           \
                         a_ + i_ * VWM);                                                      \
    _Pragma("unroll") for (int j_ = 0; j_ < WPTN / VWN; ++j_)                                 \
        CAT(TOARR_, VWN)(*(__local const floatN*)&(b_row)[(j_ * NDIMC + tx) * VWN],           \
                         b_ + j_ * VWN);                                                      \
    _Pragma("unroll") for (int i_ = 0; i_ < WPTM; ++i_)                                       \
        _Pragma("unroll") for (int j_ = 0; j_ < WPTN; ++j_) acc[i_][j_] =                     \
            mad(a_[i_], b_[j_], acc[i_][j_]);                                                 \
  } while (0)
