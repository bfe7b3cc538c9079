# Run at build time (cmake -P): writes build_info_values.cc, touching it only when it changes.
execute_process(
  COMMAND git describe --tags --always --dirty
  WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_VARIABLE GIT_DESCRIBE
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET
  RESULT_VARIABLE GIT_RESULT)
if(NOT GIT_RESULT EQUAL 0 OR GIT_DESCRIBE STREQUAL "")
  if(FALLBACK_VERSION)
    set(GIT_DESCRIBE "${FALLBACK_VERSION}")
  else()
    set(GIT_DESCRIBE "unknown")
  endif()
endif()
foreach(var BUILD_TYPE COMPILER GRPC_VERSION PROTOBUF_VERSION ABSL_VERSION ROCKSDB_VERSION
            YAML_CPP_VERSION)
  if("${${var}}" STREQUAL "")
    set(${var} "unknown")
  endif()
endforeach()
configure_file(${TEMPLATE} ${OUTPUT} @ONLY)
