// OpenCL error codes: their names, their AutotuneError kinds, and a hint a person can act on.
#include "tunekit/cl/errors.hpp"

namespace tunekit::cl {

namespace {

struct CodeInfo {
  cl_int code;
  const char* name;
  ErrorKind kind;
  const char* hint;  // what the code usually means for a tuning candidate
};

// CL_PLATFORM_NOT_FOUND_KHR comes from cl_khr_icd, which not every header set defines; the
// codes of OpenCL 2.0 and later are missing from headers that target an older version.
constexpr cl_int platform_not_found_khr = -1001;
constexpr cl_int invalid_pipe_size = -69;
constexpr cl_int invalid_device_queue = -70;
constexpr cl_int invalid_spec_id = -71;
constexpr cl_int max_size_restriction_exceeded = -72;
constexpr cl_int device_partition_failed_ext = -1057;
constexpr cl_int invalid_partition_count_ext = -1058;
constexpr cl_int invalid_partition_name_ext = -1059;

constexpr CodeInfo codes[] = {
    {CL_DEVICE_NOT_FOUND, "CL_DEVICE_NOT_FOUND", ErrorKind::device, "no device of that type"},
    {CL_DEVICE_NOT_AVAILABLE, "CL_DEVICE_NOT_AVAILABLE", ErrorKind::device,
     "the device is in use or switched off"},
    {CL_COMPILER_NOT_AVAILABLE, "CL_COMPILER_NOT_AVAILABLE", ErrorKind::build,
     "the driver has no OpenCL C compiler"},
    {CL_MEM_OBJECT_ALLOCATION_FAILURE, "CL_MEM_OBJECT_ALLOCATION_FAILURE", ErrorKind::allocation,
     "device memory is exhausted"},
    {CL_OUT_OF_RESOURCES, "CL_OUT_OF_RESOURCES", ErrorKind::out_of_resources,
     "the device lacks the registers, local memory or other resources the launch needs"},
    {CL_OUT_OF_HOST_MEMORY, "CL_OUT_OF_HOST_MEMORY", ErrorKind::allocation,
     "host memory is exhausted"},
    {CL_PROFILING_INFO_NOT_AVAILABLE, "CL_PROFILING_INFO_NOT_AVAILABLE", ErrorKind::runtime,
     "the event has no profiling data (queue without profiling, or not finished)"},
    {CL_MEM_COPY_OVERLAP, "CL_MEM_COPY_OVERLAP", ErrorKind::launch,
     "source and destination of a copy overlap"},
    {CL_IMAGE_FORMAT_MISMATCH, "CL_IMAGE_FORMAT_MISMATCH", ErrorKind::launch,
     "source and destination images have different formats"},
    {CL_IMAGE_FORMAT_NOT_SUPPORTED, "CL_IMAGE_FORMAT_NOT_SUPPORTED", ErrorKind::launch,
     "the device does not support this image format"},
    {CL_BUILD_PROGRAM_FAILURE, "CL_BUILD_PROGRAM_FAILURE", ErrorKind::build,
     "the program did not compile"},
    {CL_MAP_FAILURE, "CL_MAP_FAILURE", ErrorKind::runtime, "a buffer could not be mapped"},
    {CL_MISALIGNED_SUB_BUFFER_OFFSET, "CL_MISALIGNED_SUB_BUFFER_OFFSET", ErrorKind::launch,
     "a sub-buffer offset is not aligned for the device"},
    {CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
     ErrorKind::runtime, "a command this one waited for failed"},
    {CL_COMPILE_PROGRAM_FAILURE, "CL_COMPILE_PROGRAM_FAILURE", ErrorKind::build,
     "the program did not compile"},
    {CL_LINKER_NOT_AVAILABLE, "CL_LINKER_NOT_AVAILABLE", ErrorKind::build,
     "the driver has no linker"},
    {CL_LINK_PROGRAM_FAILURE, "CL_LINK_PROGRAM_FAILURE", ErrorKind::build,
     "the program did not link"},
    {CL_DEVICE_PARTITION_FAILED, "CL_DEVICE_PARTITION_FAILED", ErrorKind::device,
     "the device could not be partitioned"},
    {CL_KERNEL_ARG_INFO_NOT_AVAILABLE, "CL_KERNEL_ARG_INFO_NOT_AVAILABLE", ErrorKind::build,
     "the program was built without kernel argument information"},
    {CL_INVALID_VALUE, "CL_INVALID_VALUE", ErrorKind::launch, "an argument value is invalid"},
    {CL_INVALID_DEVICE_TYPE, "CL_INVALID_DEVICE_TYPE", ErrorKind::device, "invalid device type"},
    {CL_INVALID_PLATFORM, "CL_INVALID_PLATFORM", ErrorKind::device, "invalid platform"},
    {CL_INVALID_DEVICE, "CL_INVALID_DEVICE", ErrorKind::device, "invalid device"},
    {CL_INVALID_CONTEXT, "CL_INVALID_CONTEXT", ErrorKind::runtime,
     "objects from different contexts were mixed"},
    {CL_INVALID_QUEUE_PROPERTIES, "CL_INVALID_QUEUE_PROPERTIES", ErrorKind::device,
     "the device does not support these queue properties"},
    {CL_INVALID_COMMAND_QUEUE, "CL_INVALID_COMMAND_QUEUE", ErrorKind::runtime,
     "invalid command queue"},
    {CL_INVALID_HOST_PTR, "CL_INVALID_HOST_PTR", ErrorKind::launch, "invalid host pointer"},
    {CL_INVALID_MEM_OBJECT, "CL_INVALID_MEM_OBJECT", ErrorKind::launch,
     "an argument is not a valid buffer"},
    {CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR", ErrorKind::launch,
     "invalid image format"},
    {CL_INVALID_IMAGE_SIZE, "CL_INVALID_IMAGE_SIZE", ErrorKind::allocation,
     "the image is larger than the device allows"},
    {CL_INVALID_SAMPLER, "CL_INVALID_SAMPLER", ErrorKind::launch, "invalid sampler"},
    {CL_INVALID_BINARY, "CL_INVALID_BINARY", ErrorKind::build, "invalid program binary"},
    {CL_INVALID_BUILD_OPTIONS, "CL_INVALID_BUILD_OPTIONS", ErrorKind::build,
     "the build options are invalid"},
    {CL_INVALID_PROGRAM, "CL_INVALID_PROGRAM", ErrorKind::build, "invalid program"},
    {CL_INVALID_PROGRAM_EXECUTABLE, "CL_INVALID_PROGRAM_EXECUTABLE", ErrorKind::build,
     "the program was not built for this device"},
    {CL_INVALID_KERNEL_NAME, "CL_INVALID_KERNEL_NAME", ErrorKind::build,
     "the program has no kernel of that name"},
    {CL_INVALID_KERNEL_DEFINITION, "CL_INVALID_KERNEL_DEFINITION", ErrorKind::build,
     "the kernel differs between devices"},
    {CL_INVALID_KERNEL, "CL_INVALID_KERNEL", ErrorKind::launch, "invalid kernel object"},
    {CL_INVALID_ARG_INDEX, "CL_INVALID_ARG_INDEX", ErrorKind::launch,
     "the kernel has fewer arguments"},
    {CL_INVALID_ARG_VALUE, "CL_INVALID_ARG_VALUE", ErrorKind::launch,
     "the argument value does not fit the parameter"},
    {CL_INVALID_ARG_SIZE, "CL_INVALID_ARG_SIZE", ErrorKind::launch,
     "the argument's size differs from the parameter's type"},
    {CL_INVALID_KERNEL_ARGS, "CL_INVALID_KERNEL_ARGS", ErrorKind::launch,
     "some kernel arguments are not set"},
    {CL_INVALID_WORK_DIMENSION, "CL_INVALID_WORK_DIMENSION", ErrorKind::launch,
     "the NDRange has an unsupported number of dimensions"},
    {CL_INVALID_WORK_GROUP_SIZE, "CL_INVALID_WORK_GROUP_SIZE", ErrorKind::launch,
     "the work-group size is not accepted (too large, not dividing the global size, or not the "
     "kernel's required size)"},
    {CL_INVALID_WORK_ITEM_SIZE, "CL_INVALID_WORK_ITEM_SIZE", ErrorKind::launch,
     "a work-group dimension exceeds the device's maximum"},
    {CL_INVALID_GLOBAL_OFFSET, "CL_INVALID_GLOBAL_OFFSET", ErrorKind::launch,
     "invalid global offset"},
    {CL_INVALID_EVENT_WAIT_LIST, "CL_INVALID_EVENT_WAIT_LIST", ErrorKind::launch,
     "invalid event wait list"},
    {CL_INVALID_EVENT, "CL_INVALID_EVENT", ErrorKind::runtime, "invalid event"},
    {CL_INVALID_OPERATION, "CL_INVALID_OPERATION", ErrorKind::launch,
     "the operation is not valid here"},
    {CL_INVALID_GL_OBJECT, "CL_INVALID_GL_OBJECT", ErrorKind::launch, "invalid OpenGL object"},
    {CL_INVALID_BUFFER_SIZE, "CL_INVALID_BUFFER_SIZE", ErrorKind::allocation,
     "the buffer size is zero or above the device's maximum allocation"},
    {CL_INVALID_GLOBAL_WORK_SIZE, "CL_INVALID_GLOBAL_WORK_SIZE", ErrorKind::launch,
     "the global size is zero or too large"},
    {CL_INVALID_MIP_LEVEL, "CL_INVALID_MIP_LEVEL", ErrorKind::launch, "invalid mip-map level"},
    {CL_INVALID_PROPERTY, "CL_INVALID_PROPERTY", ErrorKind::runtime, "invalid property"},
    {CL_INVALID_IMAGE_DESCRIPTOR, "CL_INVALID_IMAGE_DESCRIPTOR", ErrorKind::launch,
     "invalid image descriptor"},
    {CL_INVALID_COMPILER_OPTIONS, "CL_INVALID_COMPILER_OPTIONS", ErrorKind::build,
     "the compiler options are invalid"},
    {CL_INVALID_LINKER_OPTIONS, "CL_INVALID_LINKER_OPTIONS", ErrorKind::build,
     "the linker options are invalid"},
    {CL_INVALID_DEVICE_PARTITION_COUNT, "CL_INVALID_DEVICE_PARTITION_COUNT", ErrorKind::device,
     "invalid device partition count"},
    {invalid_pipe_size, "CL_INVALID_PIPE_SIZE", ErrorKind::allocation,
     "the pipe's packet size or count is zero or above the device's maximum"},
    {invalid_device_queue, "CL_INVALID_DEVICE_QUEUE", ErrorKind::launch,
     "invalid device-side queue"},
    {invalid_spec_id, "CL_INVALID_SPEC_ID", ErrorKind::build,
     "the program has no specialization constant of that id"},
    {max_size_restriction_exceeded, "CL_MAX_SIZE_RESTRICTION_EXCEEDED", ErrorKind::out_of_resources,
     "a size exceeds what the device can handle (e.g. a kernel argument over its maximum)"},
    {platform_not_found_khr, "CL_PLATFORM_NOT_FOUND_KHR", ErrorKind::device,
     "no OpenCL platform is installed"},
    {device_partition_failed_ext, "CL_DEVICE_PARTITION_FAILED_EXT", ErrorKind::device,
     "the device could not be partitioned"},
    {invalid_partition_count_ext, "CL_INVALID_PARTITION_COUNT_EXT", ErrorKind::device,
     "invalid device partition count"},
    {invalid_partition_name_ext, "CL_INVALID_PARTITION_NAME_EXT", ErrorKind::device,
     "invalid device partition name"},
};

const CodeInfo* find(cl_int code) {
  for (const auto& info : codes) {
    if (info.code == code) return &info;
  }
  return nullptr;
}

}  // namespace

std::string error_name(cl_int code) {
  if (const CodeInfo* info = find(code)) return info->name;
  return "OpenCL error " + std::to_string(code);
}

ErrorKind error_kind(cl_int code) {
  if (const CodeInfo* info = find(code)) return info->kind;
  return ErrorKind::runtime;
}

AutotuneError make_error(cl_int code, std::string_view what) {
  std::string message(what);
  message += ": " + error_name(code) + " (" + std::to_string(code) + ")";
  if (const CodeInfo* info = find(code)) {
    message += ": ";
    message += info->hint;
  }
  return AutotuneError(error_kind(code), std::move(message));
}

}  // namespace tunekit::cl
