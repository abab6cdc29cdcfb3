use std::ops::Range;
use std::sync::atomic::AtomicBool;

use crate::common::bitvec::{BitSlice, BitSliceExt as _, BitVec, bitvec_set_deleted};
use crate::common::counter::hardware_counter::HardwareCounterCell;
use crate::common::generic_consts::{AccessPattern, Random};
use crate::common::types::PointOffsetType;
use crate::sparse::common::sparse_vector::SparseVector;
use crate::sparse::common::types::{DimId, DimWeight};

use crate::segment::common::Flusher;
use crate::segment::common::operation_error::{OperationError, OperationResult, check_process_stopped};
use crate::segment::data_types::named_vectors::CowVector;
use crate::segment::data_types::vectors::VectorRef;
use crate::segment::types::{Distance, VectorStorageDatatype};
use crate::segment::vector_storage::{
    SparseVectorStorage, VectorStorage, VectorStorageEnum, VectorStorageRead,
};

pub const SPARSE_VECTOR_DISTANCE: Distance = Distance::Dot;

/// In-memory vector storage with on-update persistence using `store`
#[derive(Default, Debug)]
pub struct VolatileSparseVectorStorage {
    vectors: Vec<Option<SparseVector>>,
    /// BitVec for deleted flags. Grows dynamically upto last set flag.
    deleted: BitVec,
    /// Current number of deleted vectors.
    deleted_count: usize,
    total_vector_count: usize,
    /// Total number of non-zero elements in all vectors. Used to estimate average vector size.
    total_sparse_size: usize,
}

pub fn new_volatile_sparse_vector_storage() -> VectorStorageEnum {
    VectorStorageEnum::SparseVolatile(VolatileSparseVectorStorage::default())
}

impl VolatileSparseVectorStorage {
    /// Set deleted flag for given key. Returns previous deleted state.
    #[inline]
    fn set_deleted(&mut self, key: PointOffsetType, deleted: bool) -> bool {
        if !deleted && key as usize >= self.total_vector_count {
            return false;
        }
        let was_deleted = bitvec_set_deleted(&mut self.deleted, key, deleted);
        if was_deleted != deleted {
            if !was_deleted {
                self.deleted_count += 1;
            } else {
                self.deleted_count = self.deleted_count.saturating_sub(1);
            }
        }
        was_deleted
    }

    fn update_stored(
        &mut self,
        key: PointOffsetType,
        deleted: bool,
        vector: Option<&SparseVector>,
    ) {
        // Resize sparse vector container if needed
        if key as usize >= self.vectors.len() {
            if deleted {
                return;
            }
            self.vectors.resize(key as usize + 1, None);
        }

        let entry = &mut self.vectors[key as usize];

        // Update bookkeeping of total sparse size
        let elements_removed = entry.as_ref().map_or(0, |v| v.indices.len());
        let elements_added = vector
            .as_ref()
            .filter(|_| !deleted)
            .map_or(0, |v| v.indices.len());
        self.total_sparse_size = self
            .total_sparse_size
            .saturating_sub(elements_removed)
            .saturating_add(elements_added);

        if deleted {
            entry.take();
        } else {
            *entry = vector.cloned();
        }
    }

    pub fn size_of_available_vectors_in_bytes(&self) -> usize {
        if self.total_vector_count == 0 {
            return 0;
        }
        let available_fraction =
            (self.total_vector_count - self.deleted_count) as f32 / self.total_vector_count as f32;
        let available_size = (self.total_sparse_size as f32 * available_fraction) as usize;
        available_size * (std::mem::size_of::<DimWeight>() + std::mem::size_of::<DimId>())
    }
}

impl SparseVectorStorage for VolatileSparseVectorStorage {
    fn get_sparse<P: AccessPattern>(&self, key: PointOffsetType) -> OperationResult<SparseVector> {
        let vector = self
            .get_sparse_opt::<P>(key)?
            .ok_or_else(|| OperationError::service_error("Sparse vector not found in storage"))?;
        Ok(vector)
    }

    fn get_sparse_opt<P: AccessPattern>(
        &self,
        key: PointOffsetType,
    ) -> OperationResult<Option<SparseVector>> {
        // Already in memory, so no sequential optimizations available.
        let opt_vector = self.vectors.get(key as usize).cloned().flatten();
        Ok(opt_vector)
    }

    fn for_each_in_sparse_batch<F>(
        &self,
        keys: &[PointOffsetType],
        mut callback: F,
    ) -> OperationResult<()>
    where
        F: FnMut(usize, SparseVector),
    {
        for (idx, &key) in keys.iter().enumerate() {
            let vector = self.get_sparse::<Random>(key)?;
            callback(idx, vector);
        }

        Ok(())
    }
}

impl VectorStorageRead for VolatileSparseVectorStorage {
    fn distance(&self) -> Distance {
        SPARSE_VECTOR_DISTANCE
    }

    fn datatype(&self) -> VectorStorageDatatype {
        VectorStorageDatatype::Float32
    }

    fn is_on_disk(&self) -> bool {
        false
    }

    fn total_vector_count(&self) -> usize {
        self.total_vector_count
    }

    fn get_vector<P: AccessPattern>(&self, key: PointOffsetType) -> CowVector<'_> {
        let vector = self.get_vector_opt::<P>(key);
        vector.unwrap_or_else(CowVector::default_sparse)
    }

    /// Get vector by key, if it exists.
    ///
    /// ignore any error
    fn get_vector_opt<P: AccessPattern>(&self, key: PointOffsetType) -> Option<CowVector<'_>> {
        // In memory, so no sequential read optimization.
        match self.get_sparse_opt::<P>(key) {
            Ok(Some(vector)) => Some(CowVector::from(vector)),
            _ => None,
        }
    }

    fn is_deleted_vector(&self, key: PointOffsetType) -> bool {
        self.deleted.get_bit(key as usize).unwrap_or(false)
    }

    fn deleted_vector_count(&self) -> usize {
        self.deleted_count
    }

    fn deleted_vector_bitslice(&self) -> &BitSlice {
        self.deleted.as_bitslice()
    }
}

impl VectorStorage for VolatileSparseVectorStorage {
    fn insert_vector(
        &mut self,
        key: PointOffsetType,
        vector: VectorRef,
        _hw_counter: &HardwareCounterCell,
    ) -> OperationResult<()> {
        let vector: &SparseVector = vector.try_into()?;
        debug_assert!(vector.is_sorted());
        self.total_vector_count = std::cmp::max(self.total_vector_count, key as usize + 1);
        self.set_deleted(key, false);
        self.update_stored(key, false, Some(vector));
        Ok(())
    }

    fn update_from<'a>(
        &mut self,
        other_vectors: &'a mut impl Iterator<Item = (CowVector<'a>, bool)>,
        stopped: &AtomicBool,
    ) -> OperationResult<Range<PointOffsetType>> {
        let start_index = self.total_vector_count as PointOffsetType;
        for (other_vector, other_deleted) in other_vectors {
            check_process_stopped(stopped)?;
            // Do not perform preprocessing - vectors should be already processed
            let other_vector = other_vector.as_vec_ref().try_into()?;
            let new_id = self.total_vector_count as PointOffsetType;
            self.total_vector_count += 1;
            self.set_deleted(new_id, other_deleted);
            self.update_stored(new_id, other_deleted, Some(other_vector));
        }
        Ok(start_index..self.total_vector_count as PointOffsetType)
    }

    fn flusher(&self) -> Flusher {
        Box::new(|| Ok(()))
    }

    fn files(&self) -> Vec<std::path::PathBuf> {
        vec![]
    }

    fn delete_vector(&mut self, key: PointOffsetType) -> OperationResult<bool> {
        let is_deleted = !self.set_deleted(key, true);
        if is_deleted {
            let old_vector = self.get_sparse_opt::<Random>(key).ok().flatten();
            self.update_stored(key, true, old_vector.as_ref());
        }
        Ok(is_deleted)
    }
}
