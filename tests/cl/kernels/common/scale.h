// Included by embedded_scale.cl, found among the embedded files beside it.
#define SCALE 3.0f
