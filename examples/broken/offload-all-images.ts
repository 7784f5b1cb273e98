/**
 * Broken subject: every image is dropped on an image-budget rejection, whatever count the provider asked for.
 *
 * Bug: the adapter does not read `offloadImages` from the rejection (§1.2.2) and reports "as many as there
 * are", so the §6.3 selection offloads every eligible image instead of the oldest n the provider demanded.
 * Real-world analogue: clients that, on "too many images", strip all images from the history and retry.
 * Why this id: the log is consistent with the count the adapter reported (INV-37/INV-38 judge the logged
 * count); only the world knows it demanded fewer, so the retried request carries too few images.
 *
 * @fails WORLD-03 faults/fault-12-image-offload-required
 */
import { FailureCode } from '@compaction-sim/core'
import { exampleSubject } from '../subject-core-adapter/subject.ts'
import { relabelFailures } from './support/adapter.ts'

/** The count the buggy adapter reports: more images than any request carries. */
const ALL_IMAGES = 1_000

export default {
  ...exampleSubject({
    adapter: (inner) => relabelFailures(inner, (failure) =>
      failure.code === FailureCode.IMAGE_OFFLOAD_REQUIRED ? { ...failure, offloadImages: ALL_IMAGES } : failure),
  }),
  name: 'broken-offload-all-images',
}
