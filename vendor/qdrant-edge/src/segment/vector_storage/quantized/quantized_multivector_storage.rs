use std::borrow::Cow;
use std::ops::DerefMut as _;
use std::path::{Path, PathBuf};
use std::{iter, slice};

use ahash::HashMapExt as _;
use crate::common::counter::hardware_counter::HardwareCounterCell;
use crate::common::generic_consts::Random;
use crate::common::mmap::{Advice, AdviceSetting, MmapFlusher, MmapSlice};
use crate::common::typelevel::False;
use crate::common::types::{PointOffsetType, ScoreType};
use crate::common::universal_io::{MmapFile, MmapFs, OpenOptions, Populate, ReadRange, TypedStorage};
use fs_err as fs;
use memmap2::MmapMut;
use crate::quantization::EncodedVectors;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use crate::segment::common::operation_error::OperationResult;
use crate::segment::data_types::vectors::{TypedMultiDenseVectorRef, VectorElementType};
use crate::segment::types::{MultiVectorComparator, MultiVectorConfig};
use crate::segment::vector_storage::VectorOffsetType;
use crate::segment::vector_storage::chunked_vectors::ChunkedVectors;

#[derive(
    Copy,
    Clone,
    Debug,
    Default,
    PartialEq,
    Deserialize,
    Serialize,
    bytemuck::Pod,
    bytemuck::Zeroable,
)]
#[repr(C)]
pub struct MultivectorOffset {
    pub start: PointOffsetType,
    pub count: PointOffsetType,
}

pub trait MultivectorOffsets {
    fn get_offset(&self, idx: PointOffsetType) -> MultivectorOffset;

    fn iter_offsets(
        &self,
        ids: &[PointOffsetType],
    ) -> impl Iterator<Item = (usize, MultivectorOffset)>;
}

#[allow(clippy::len_without_is_empty)]
pub trait MultivectorOffsetsStorage: Sized {
    fn get_offset(&self, idx: PointOffsetType) -> MultivectorOffset;

    fn iter_offsets(
        &self,
        ids: &[PointOffsetType],
    ) -> impl Iterator<Item = (usize, MultivectorOffset)>;

    fn len(&self) -> usize;

    fn upsert_offset(
        &mut self,
        id: PointOffsetType,
        offset: MultivectorOffset,
        hw_counter: &HardwareCounterCell,
    ) -> std::io::Result<()>;

    fn flusher(&self) -> MmapFlusher;

    fn files(&self) -> Vec<PathBuf>;

    fn immutable_files(&self) -> Vec<PathBuf>;

    fn heap_size_bytes(&self) -> usize;
}

pub struct MultivectorOffsetsStorageRam {
    offsets: Vec<MultivectorOffset>,
    path: PathBuf,
}

impl MultivectorOffsetsStorageRam {
    pub fn create(
        path: &Path,
        offsets: impl Iterator<Item = MultivectorOffset>,
    ) -> OperationResult<Self> {
        let offsets: Vec<_> = offsets.collect();
        create_offsets_file_from_iter(path, offsets.len(), offsets.iter().cloned())?;
        Ok(MultivectorOffsetsStorageRam {
            path: path.to_path_buf(),
            offsets,
        })
    }

    pub fn load(path: &Path) -> OperationResult<Self> {
        let offsets_file = fs::OpenOptions::new().read(true).write(true).open(path)?;
        let offsets_mmap = unsafe { MmapMut::map_mut(&offsets_file) }?;
        let mut offsets_mmap_type =
            unsafe { MmapSlice::<MultivectorOffset>::try_from(offsets_mmap)? };
        Ok(MultivectorOffsetsStorageRam {
            offsets: offsets_mmap_type.deref_mut().iter().copied().collect(),
            path: path.to_path_buf(),
        })
    }
}

impl MultivectorOffsetsStorage for MultivectorOffsetsStorageRam {
    fn get_offset(&self, idx: PointOffsetType) -> MultivectorOffset {
        self.offsets[idx as usize]
    }

    fn iter_offsets(
        &self,
        ids: &[PointOffsetType],
    ) -> impl Iterator<Item = (usize, MultivectorOffset)> {
        ids.iter().map(|&id| self.get_offset(id)).enumerate()
    }

    fn len(&self) -> usize {
        self.offsets.len()
    }

    fn upsert_offset(
        &mut self,
        id: PointOffsetType,
        offset: MultivectorOffset,
        _hw_counter: &HardwareCounterCell,
    ) -> std::io::Result<()> {
        // Skip hardware counter increment because it's a RAM storage.
        if id as usize >= self.len() {
            self.offsets
                .resize(id as usize + 1, MultivectorOffset::default());
        }
        self.offsets[id as usize] = offset;
        Ok(())
    }

    fn flusher(&self) -> MmapFlusher {
        Box::new(|| Ok(()))
    }

    fn files(&self) -> Vec<PathBuf> {
        vec![self.path.clone()]
    }

    fn immutable_files(&self) -> Vec<PathBuf> {
        vec![self.path.clone()]
    }

    fn heap_size_bytes(&self) -> usize {
        let Self { offsets, path: _ } = self;
        offsets.capacity() * std::mem::size_of::<MultivectorOffset>()
    }
}

#[derive(Debug)]
pub struct MultivectorOffsetsStorageMmap {
    offsets: TypedStorage<MmapFile, MultivectorOffset>,
    path: PathBuf,
}

impl MultivectorOffsetsStorageMmap {
    pub fn create(
        path: &Path,
        offsets: impl Iterator<Item = MultivectorOffset>,
        count: usize,
    ) -> OperationResult<Self> {
        create_offsets_file_from_iter(path, count, offsets)?;
        MultivectorOffsetsStorageMmap::load(path)
    }

    pub fn load(path: &Path) -> OperationResult<Self> {
        let offsets = TypedStorage::<MmapFile, MultivectorOffset>::open(
            &MmapFs,
            path,
            OpenOptions {
                writeable: false,
                need_sequential: false,
                populate: Populate::No,
                advice: AdviceSetting::Global,
            },
            (),
        )?;

        Ok(Self {
            offsets,
            path: path.to_path_buf(),
        })
    }

    pub fn populate(&self) -> OperationResult<()> {
        Ok(self.offsets.populate()?)
    }

    pub fn clear_cache(&self) -> OperationResult<()> {
        Ok(self.offsets.clear_ram_cache()?)
    }
}

impl MultivectorOffsetsStorage for MultivectorOffsetsStorageMmap {
    fn get_offset(&self, idx: PointOffsetType) -> MultivectorOffset {
        let offset = self
            .offsets
            .read::<Random>(ReadRange::one(
                u64::from(idx) * size_of::<MultivectorOffset>() as u64,
            ))
            .expect("multi-vector offset read");

        let [offset] = offset.as_ref() else {
            unreachable!("multi-vector offsets are stored as a single-element slice");
        };

        *offset
    }

    fn iter_offsets(
        &self,
        ids: &[PointOffsetType],
    ) -> impl Iterator<Item = (usize, MultivectorOffset)> {
        let ranges = ids.iter().copied().enumerate().map(|(idx, id)| {
            let offset = u64::from(id) * size_of::<MultivectorOffset>() as u64;
            let range = ReadRange::one(offset);
            (idx, range)
        });

        self.offsets
            .read_iter::<Random, _>(ranges)
            .expect("multi-vector offsets iterator initialized")
            .map(|result| {
                let (idx, offset) = result.expect("multi-vector offset read");
                let [offset] = offset.as_ref() else {
                    unreachable!("multi-vector offsets are stored as a single-element slice");
                };

                (idx, *offset)
            })
    }

    fn len(&self) -> usize {
        self.offsets
            .len()
            .expect("multi-vector offsets length read") as _
    }

    fn upsert_offset(
        &mut self,
        _id: PointOffsetType,
        _offset: MultivectorOffset,
        _hw_counter: &HardwareCounterCell,
    ) -> std::io::Result<()> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "Cannot upsert offset in mmap storage",
        ))
    }

    fn flusher(&self) -> MmapFlusher {
        // Mmap storage does not need a flusher, as it is non-appendable and already backed by a file.
        Box::new(|| Ok(()))
    }

    fn files(&self) -> Vec<PathBuf> {
        vec![self.path.clone()]
    }

    fn immutable_files(&self) -> Vec<PathBuf> {
        vec![self.path.clone()]
    }

    fn heap_size_bytes(&self) -> usize {
        let Self {
            offsets: _,
            path: _,
        } = self;

        0
    }
}

pub struct MultivectorOffsetsStorageChunkedMmap {
    data: ChunkedVectors<MultivectorOffset, MmapFile>,
}

impl MultivectorOffsetsStorageChunkedMmap {
    pub fn create(
        path: &Path,
        offsets: impl Iterator<Item = MultivectorOffset>,
        in_ram: bool,
    ) -> OperationResult<Self> {
        let hw_counter = HardwareCounterCell::disposable();
        let mut offsets_storage = Self::load(path, in_ram)?;
        for (id, offset) in offsets.enumerate() {
            offsets_storage.upsert_offset(id as PointOffsetType, offset, &hw_counter)?;
        }
        offsets_storage.flusher()()?;
        Ok(offsets_storage)
    }

    pub fn load(path: &Path, in_ram: bool) -> OperationResult<Self> {
        let advice = if in_ram {
            AdviceSetting::from(Advice::Normal)
        } else {
            AdviceSetting::Global
        };
        let data = ChunkedVectors::open(
            MmapFs,
            path,
            1,
            advice,
            Some(in_ram), // populate
        )?;
        Ok(Self { data })
    }

    pub fn populate(&self) -> OperationResult<()> {
        self.data.populate()
    }

    pub fn clear_cache(&self) -> OperationResult<()> {
        let Self { data } = self;
        data.clear_cache()
    }
}

impl MultivectorOffsetsStorage for MultivectorOffsetsStorageChunkedMmap {
    fn get_offset(&self, idx: PointOffsetType) -> MultivectorOffset {
        self.data
            .get::<Random>(idx as VectorOffsetType)
            .and_then(|offsets| offsets.first().copied())
            .unwrap_or_default()
    }

    fn iter_offsets(
        &self,
        ids: &[PointOffsetType],
    ) -> impl Iterator<Item = (usize, MultivectorOffset)> {
        self.data.iter(ids).map(|(idx, offset)| {
            let [offset] = offset.as_ref() else {
                unreachable!("multi-vector offsets are stored as a single-element slice");
            };

            (idx, *offset)
        })
    }

    fn len(&self) -> usize {
        self.data.len()
    }

    fn flusher(&self) -> MmapFlusher {
        let flusher = ChunkedVectors::flusher(&self.data);
        Box::new(move || {
            flusher().map_err(|e| {
                std::io::Error::other(format!("Failed to flush multivector offsets storage: {e}"))
            })?;
            Ok(())
        })
    }

    fn upsert_offset(
        &mut self,
        id: PointOffsetType,
        offset: MultivectorOffset,
        hw_counter: &HardwareCounterCell,
    ) -> std::io::Result<()> {
        self.data
            .insert(id as VectorOffsetType, &[offset], hw_counter)
            .map_err(std::io::Error::other)
    }

    fn files(&self) -> Vec<PathBuf> {
        self.data.files()
    }

    fn immutable_files(&self) -> Vec<PathBuf> {
        self.data.immutable_files()
    }

    fn heap_size_bytes(&self) -> usize {
        let Self { data: _ } = self;
        0
    }
}

pub struct QuantizedMultivectorStorage<QuantizedStorage, TMultivectorOffsetsStorage>
where
    QuantizedStorage: EncodedVectors,
    TMultivectorOffsetsStorage: MultivectorOffsetsStorage,
{
    quantized_storage: QuantizedStorage,
    offsets: TMultivectorOffsetsStorage,
    dim: usize,
    multi_vector_config: MultiVectorConfig,
}

pub type DynScore<'a, Query> = dyn Fn(&Vec<Query>) -> ScoreType + 'a;

impl<QuantizedStorage, TMultivectorOffsetsStorage>
    QuantizedMultivectorStorage<QuantizedStorage, TMultivectorOffsetsStorage>
where
    QuantizedStorage: EncodedVectors,
    TMultivectorOffsetsStorage: MultivectorOffsetsStorage,
{
    pub fn storage(&self) -> &QuantizedStorage {
        &self.quantized_storage
    }

    pub fn offsets_storage(&self) -> &TMultivectorOffsetsStorage {
        &self.offsets
    }

    pub fn new(
        dim: usize,
        quantized_storage: QuantizedStorage,
        offsets: TMultivectorOffsetsStorage,
        multi_vector_config: MultiVectorConfig,
    ) -> Self {
        Self {
            quantized_storage,
            offsets,
            dim,
            multi_vector_config,
        }
    }

    #[inline]
    pub fn score_points_batch<F>(
        &self,
        point_ids: &[PointOffsetType],
        scorer: F,
        scores: &mut [ScoreType],
        hw_counter: &HardwareCounterCell,
    ) where
        F: Fn(&DynScore<QuantizedStorage::EncodedQuery>) -> ScoreType,
    {
        debug_assert_eq!(point_ids.len(), scores.len());

        if QuantizedStorage::is_in_ram_or_mmap() {
            // This function is optimized of in-ram access
            // it doesn't do extra mem copies and assume reference access
            self.score_points_batch_in_mem_like(point_ids, scorer, scores, hw_counter);
        } else {
            // Optimized for remote access from external storage,
            // does memory copy, but minimizes assessed to external storage
            self.score_points_batch_uring_like(point_ids, scorer, scores, hw_counter);
        }
    }

    #[inline]
    fn score_points_batch_in_mem_like<F>(
        &self,
        point_ids: &[PointOffsetType],
        scorer: F,
        scores: &mut [ScoreType],
        hw_counter: &HardwareCounterCell,
    ) where
        F: Fn(&DynScore<QuantizedStorage::EncodedQuery>) -> ScoreType,
    {
        match self.multi_vector_config.comparator {
            MultiVectorComparator::MaxSim => (),
        }

        for (index, &point_id) in point_ids.iter().enumerate() {
            scores[index] = scorer(&|query| {
                self.score_point_max_similarity(query, point_id, hw_counter) // inhibit rustfmt
            });
        }
    }

    #[inline]
    fn score_points_batch_uring_like<F>(
        &self,
        point_ids: &[PointOffsetType],
        scorer: F,
        scores: &mut [ScoreType],
        hw_counter: &HardwareCounterCell,
    ) where
        F: Fn(&DynScore<QuantizedStorage::EncodedQuery>) -> ScoreType,
    {
        match self.multi_vector_config.comparator {
            MultiVectorComparator::MaxSim => (),
        }

        self.for_each_in_multi_batch(
            point_ids,
            |index, multi_vector| {
                scores[index] = scorer(&|query| {
                    self.score_vector_max_similarity(query, multi_vector, hw_counter)
                });
            },
            hw_counter,
        );
    }

    fn for_each_in_multi_batch(
        &self,
        point_ids: &[PointOffsetType],
        mut callback: impl FnMut(usize, &[Cow<'_, [u8]>]),
        hw_counter: &HardwareCounterCell,
    ) {
        debug_assert!(point_ids.len() <= u32::MAX as usize);

        #[derive(Copy, Clone)]
        struct State {
            index: u32,
            count: u32,
        }

        let mut state = Vec::with_capacity(point_ids.len());
        let mut chunks = Vec::with_capacity(point_ids.len());

        for (index, offset) in self.offsets.iter_offsets(point_ids) {
            for _ in 0..offset.count {
                state.push(State {
                    index: index as u32,
                    count: offset.count,
                });
            }

            chunks.extend(offset.start..offset.start + offset.count);
        }

        hw_counter
            .vector_io_read()
            .incr_delta(chunks.len() * self.quantized_vector_size());

        let mut multi_vectors = ahash::HashMap::new();

        for (chunk_index, vector) in self.quantized_storage.iter_batch(&chunks) {
            let State { index, count } = state[chunk_index];

            if count == 1 {
                callback(index as _, slice::from_ref(&vector));
                continue;
            }

            let multi_vector = multi_vectors
                .entry(index)
                .or_insert_with(SmallVec::<[_; 4]>::new);

            multi_vector.push(vector);

            if multi_vector.len() == count as usize {
                let multi_vector = multi_vectors.remove(&index).expect("multi-vector exists");
                callback(index as _, &multi_vector);
            }
        }

        debug_assert!(multi_vectors.is_empty());
    }

    /// Custom `score_max_similarity` implementation for quantized vectors.
    /// Efficient for io_uring storage implementation.
    fn score_vector_max_similarity(
        &self,
        query: &[QuantizedStorage::EncodedQuery],
        multi_vector: &[Cow<'_, [u8]>],
        hw_counter: &HardwareCounterCell,
    ) -> ScoreType {
        let mut sum = 0.0;

        for inner_query in query {
            let mut max_sim = ScoreType::NEG_INFINITY;

            // manual `max_by` for performance
            for vector in multi_vector {
                let sim = self
                    .quantized_storage
                    .score(inner_query, vector, hw_counter);

                if max_sim < sim {
                    max_sim = sim;
                }
            }

            // sum of max similarity
            sum += max_sim;
        }

        sum
    }

    /// Custom `score_max_similarity` implementation for quantized vectors.
    /// Efficient for in-RAM and mmap storage implementations.
    fn score_point_max_similarity(
        &self,
        query: &[QuantizedStorage::EncodedQuery],
        point_id: PointOffsetType,
        hw_counter: &HardwareCounterCell,
    ) -> ScoreType {
        let offset = self.offsets.get_offset(point_id);
        let offsets: SmallVec<[_; 8]> = (offset.start..offset.start + offset.count).collect();

        let mut max_sim: SmallVec<[_; 8]> = SmallVec::new();
        max_sim.resize(query.len(), ScoreType::NEG_INFINITY);

        for (_, vector) in self.quantized_storage.iter_batch(&offsets) {
            for (query_idx, query) in query.iter().enumerate() {
                let sim = self.quantized_storage.score(query, &vector, hw_counter);

                if max_sim[query_idx] < sim {
                    max_sim[query_idx] = sim;
                }
            }
        }

        max_sim.into_iter().sum()
    }

    /// Custom `score_max_similarity` implementation for quantized vectors
    fn score_internal_max_similarity(
        &self,
        vector_a_index: PointOffsetType,
        vector_b_index: PointOffsetType,
        hw_counter: &HardwareCounterCell,
    ) -> ScoreType {
        let offset_a = self.offsets.get_offset(vector_a_index);
        let offset_b = self.offsets.get_offset(vector_b_index);
        let mut sum = 0.0;
        for a in 0..offset_a.count {
            let mut max_sim = ScoreType::NEG_INFINITY;
            // manual `max_by` for performance
            for b in 0..offset_b.count {
                let sim = self.quantized_storage.score_internal(
                    offset_a.start + a,
                    offset_b.start + b,
                    hw_counter,
                );
                if sim > max_sim {
                    max_sim = sim;
                }
            }
            // sum of max similarity
            sum += max_sim;
        }
        sum
    }

    pub fn inner_storage(&self) -> &QuantizedStorage {
        &self.quantized_storage
    }

    pub fn inner_vector_offset(&self, id: PointOffsetType) -> MultivectorOffset {
        self.offsets.get_offset(id)
    }

    pub fn vectors_count(&self) -> usize {
        self.offsets.len()
    }
}

impl<QuantizedStorage, TMultivectorOffsetsStorage> EncodedVectors
    for QuantizedMultivectorStorage<QuantizedStorage, TMultivectorOffsetsStorage>
where
    QuantizedStorage: EncodedVectors,
    TMultivectorOffsetsStorage: MultivectorOffsetsStorage,
{
    // TODO(colbert): refactor `EncodedVectors` to support multi vector storage after quantization migration
    type EncodedQuery = Vec<QuantizedStorage::EncodedQuery>;

    fn is_in_ram_or_mmap() -> bool {
        QuantizedStorage::is_in_ram_or_mmap()
    }

    fn is_on_disk(&self) -> bool {
        self.quantized_storage.is_on_disk()
    }

    fn encode_query(&self, query: &[VectorElementType]) -> Vec<QuantizedStorage::EncodedQuery> {
        let multi_vector = TypedMultiDenseVectorRef {
            dim: self.dim,
            flattened_vectors: query,
        };
        multi_vector
            .multi_vectors()
            .map(|inner_vector| self.quantized_storage.encode_query(inner_vector))
            .collect()
    }

    fn iter_batch(&self, _: &[PointOffsetType]) -> impl Iterator<Item = (usize, Cow<'_, [u8]>)> {
        unimplemented!("quantized multi-vector storage does not support `iter_batch`");

        #[allow(unreachable_code)]
        iter::empty()
    }

    fn score(&self, _: &Self::EncodedQuery, _: &[u8], _: &HardwareCounterCell) -> f32 {
        unimplemented!("quantized multi-vector storage does not support `score`");
    }

    fn score_point(
        &self,
        query: &Vec<QuantizedStorage::EncodedQuery>,
        i: PointOffsetType,
        hw_counter: &HardwareCounterCell,
    ) -> ScoreType {
        match self.multi_vector_config.comparator {
            MultiVectorComparator::MaxSim => self.score_point_max_similarity(query, i, hw_counter),
        }
    }

    fn score_internal(
        &self,
        i: PointOffsetType,
        j: PointOffsetType,
        hw_counter: &HardwareCounterCell,
    ) -> ScoreType {
        match self.multi_vector_config.comparator {
            MultiVectorComparator::MaxSim => self.score_internal_max_similarity(i, j, hw_counter),
        }
    }

    fn quantized_vector_size(&self) -> usize {
        self.quantized_storage.quantized_vector_size()
    }

    fn encode_internal_vector(
        &self,
        id: PointOffsetType,
    ) -> Option<Vec<QuantizedStorage::EncodedQuery>> {
        let offset = self.offsets.get_offset(id);
        let mut query = Vec::with_capacity(offset.count as usize);
        for i in 0..offset.count {
            let internal_id = offset.start + i;
            query.push(self.quantized_storage.encode_internal_vector(internal_id)?)
        }
        Some(query)
    }

    fn upsert_vector(
        &mut self,
        id: PointOffsetType,
        vector: &[f32],
        hw_counter: &HardwareCounterCell,
    ) -> std::io::Result<()> {
        let multi_vector = TypedMultiDenseVectorRef {
            dim: self.dim,
            flattened_vectors: vector,
        };

        let inner_vectors_count = self.quantized_storage.vectors_count() as PointOffsetType;
        let offset = if (id as usize) < self.offsets.len() {
            let old_offset = self.offsets.get_offset(id);
            if multi_vector.vectors_count() <= old_offset.count as usize {
                // If the new vector has less or equal number of inner vectors, we can reuse the old offset
                MultivectorOffset {
                    start: old_offset.start,
                    count: multi_vector.vectors_count() as PointOffsetType,
                }
            } else {
                // Otherwise, we need allocate a new offset
                MultivectorOffset {
                    start: inner_vectors_count,
                    count: multi_vector.vectors_count() as PointOffsetType,
                }
            }
        } else {
            MultivectorOffset {
                start: inner_vectors_count,
                count: multi_vector.vectors_count() as PointOffsetType,
            }
        };

        for (i, inner_vector) in multi_vector.multi_vectors().enumerate() {
            self.quantized_storage.upsert_vector(
                offset.start + i as PointOffsetType,
                inner_vector,
                hw_counter,
            )?;
        }
        self.offsets.upsert_offset(id, offset, hw_counter)?;
        Ok(())
    }

    fn vectors_count(&self) -> usize {
        self.offsets.len()
    }

    fn flusher(&self) -> MmapFlusher {
        let quantized_storage_flusher = self.quantized_storage.flusher();
        let offsets_flusher = self.offsets.flusher();
        Box::new(move || {
            quantized_storage_flusher()?;
            offsets_flusher()?;
            Ok(())
        })
    }

    fn files(&self) -> Vec<PathBuf> {
        let mut files = self.quantized_storage.files();
        files.extend(self.offsets.files());
        files
    }

    fn immutable_files(&self) -> Vec<PathBuf> {
        let mut files = self.quantized_storage.immutable_files();
        files.extend(self.offsets.immutable_files());
        files
    }

    fn heap_size_bytes(&self) -> usize {
        let Self {
            quantized_storage,
            offsets,
            dim: _,
            multi_vector_config: _,
        } = self;

        quantized_storage.heap_size_bytes() + offsets.heap_size_bytes()
    }

    type SupportsBytes = False;
    fn score_bytes(
        &self,
        enabled: Self::SupportsBytes,
        _: &Self::EncodedQuery,
        _: &[u8],
        _: &HardwareCounterCell,
    ) -> f32 {
        match enabled {}
    }
}

impl<QuantizedStorage, TMultivectorOffsetsStorage> MultivectorOffsets
    for QuantizedMultivectorStorage<QuantizedStorage, TMultivectorOffsetsStorage>
where
    QuantizedStorage: EncodedVectors,
    TMultivectorOffsetsStorage: MultivectorOffsetsStorage,
{
    fn get_offset(&self, idx: PointOffsetType) -> MultivectorOffset {
        self.offsets.get_offset(idx)
    }

    fn iter_offsets(
        &self,
        ids: &[PointOffsetType],
    ) -> impl Iterator<Item = (usize, MultivectorOffset)> {
        self.offsets.iter_offsets(ids)
    }
}

fn create_offsets_file_from_iter(
    path: &Path,
    count: usize,
    iter: impl Iterator<Item = MultivectorOffset>,
) -> OperationResult<()> {
    path.parent()
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "Path must have a parent directory",
            )
        })
        .and_then(fs::create_dir_all)?;

    let offsets_file_size = count * std::mem::size_of::<MultivectorOffset>();
    let offsets_file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        // Don't truncate because we explicitly set the length later
        .truncate(false)
        .open(path)?;
    offsets_file.set_len(offsets_file_size as u64)?;

    let offsets_mmap = unsafe { MmapMut::map_mut(&offsets_file) }?;
    let mut offsets_mmap_type = unsafe { MmapSlice::<MultivectorOffset>::try_from(offsets_mmap)? };
    let offsets_mut: &mut [MultivectorOffset] = offsets_mmap_type.deref_mut();
    for (dst, src) in offsets_mut.iter_mut().zip(iter) {
        *dst = src;
    }
    offsets_mmap_type.flusher()()?;
    Ok(())
}
