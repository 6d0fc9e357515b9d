// kafkajs against a fauxka cluster: the scenarios side by side in one process.
// Usage: node scenarios.js BOOTSTRAP SCENARIO:TOPIC[,TOPIC...] ...
// Each scenario prints one JSON line: what the client saw ({"scenario": name, ...}), or {"error": trace}.
// The Python tests (tests/integration/test_kafkajs_client.py) make the assertions.
'use strict'

const { Kafka, logLevel, CompressionTypes, ConfigResourceTypes, AssignerProtocol } = require('kafkajs')

const DEADLINE_MS = 60000

// kafkajs logs to stdout by default, where the result lines go: its warnings and errors to stderr instead
const logCreator = () => ({ namespace, level, label, log }) => {
  const { message, ...extra } = log
  process.stderr.write(`${label} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
}

function kafka (brokers, clientId) {
  return new Kafka({ clientId, brokers, logLevel: logLevel.WARN, logCreator })
}

async function waitFor (what, done) {
  const deadline = Date.now() + DEADLINE_MS
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

const sorted = list => [...list].sort((a, b) => a - b)

// The consumer's messages as they arrive; its stop() disconnects it.
async function consume (client, topic, config, onMessage) {
  const consumer = client.consumer({ heartbeatInterval: 300, maxWaitTimeInMs: 100, ...config })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  await consumer.run({ eachMessage: async ({ partition, message }) => onMessage(partition, message) })
  return consumer
}

function record (partition, message) {
  return {
    partition,
    offset: Number(message.offset),
    key: message.key === null ? null : message.key.toString(),
    value: message.value === null ? null : message.value.toString(),
    headers: Object.entries(message.headers || {}).map(([k, v]) => [k, Buffer.from(v).toString('hex')]),
    timestamp: Number(message.timestamp)
  }
}

// ---- produce and consume: keys, headers, timestamps, both codecs kafkajs carries, a null key and value ----

async function produce (brokers, [topic]) {
  const client = kafka(brokers, 'kafkajs-produce')
  const producer = client.producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const sent = []
  try {
    for (const [codec, compression] of [['none', CompressionTypes.None], ['gzip', CompressionTypes.GZIP]]) {
      const messages = []
      for (let i = 0; i < 6; i++) {
        messages.push({
          partition: i % 3,
          key: `${codec}-key-${i}`,
          value: `value ${codec} ${i}`,
          timestamp: String(1700000000000 + i),
          headers: { codec, index: Buffer.from([i, 0xff]) }
        })
      }
      messages.push({ partition: 2, key: null, value: null })
      const metadata = await producer.send({ topic, messages, acks: -1, compression })
      const base = Object.fromEntries(metadata.map(m => [m.partition, Number(m.baseOffset)]))
      const next = {}
      for (const m of messages) {
        const offset = base[m.partition] + (next[m.partition] || 0)
        next[m.partition] = (next[m.partition] || 0) + 1
        sent.push({
          codec,
          partition: m.partition,
          offset,
          key: m.key,
          value: m.value,
          headers: Object.entries(m.headers || {}).map(([k, v]) => [k, Buffer.from(v).toString('hex')]),
          timestamp: m.timestamp === undefined ? null : Number(m.timestamp)
        })
      }
    }
  } finally {
    await producer.disconnect()
  }
  const received = []
  const consumer = await consume(client, topic, { groupId: `kafkajs-produce-${topic}` },
    (partition, message) => received.push(record(partition, message)))
  try {
    await waitFor('every record consumed', () => received.length >= sent.length)
  } finally {
    await consumer.disconnect()
  }
  return { sent, received }
}

// ---- a group of two members: the split, the commits, a member leaving, a restart from the commits ----

async function group (brokers, [topic]) {
  const client = kafka(brokers, 'kafkajs-group')
  const groupId = `kafkajs-group-${topic}`
  const admin = client.admin()
  await admin.connect()
  const producer = client.producer()
  await producer.connect()
  const messages = Array.from({ length: 40 }, (_, i) => ({ partition: i % 4, value: `g-${i}` }))
  await producer.send({ topic, messages })
  const result = {}
  const assignments = {}
  const seen = { 'member-1': new Set(), 'member-2': new Set() }
  const members = {}
  for (const name of ['member-1', 'member-2']) {
    const consumer = client.consumer({ groupId, heartbeatInterval: 300, maxWaitTimeInMs: 100 })
    consumer.on(consumer.events.GROUP_JOIN, e => { assignments[name] = sorted(e.payload.memberAssignment[topic] || []) })
    await consumer.connect()
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await consumer.run({ eachMessage: async ({ partition, message }) => seen[name].add(`${partition}:${message.offset}`) })
    members[name] = consumer
  }
  const committed = async () => {
    const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] })
    return Object.fromEntries(offsets.partitions.map(p => [p.partition, Number(p.offset)]))
  }
  try {
    // auto-commit: the group's offsets reach the end once both members hold their share and read it
    await waitFor('both members assigned and every offset committed', async () => {
      const [a, b] = [assignments['member-1'] || [], assignments['member-2'] || []]
      if (!a.length || !b.length || a.length + b.length !== 4) return false
      const offsets = await committed()
      return [0, 1, 2, 3].every(p => offsets[p] === 10)
    })
    result.assignments = [assignments['member-1'], assignments['member-2']]
    result.committed = await committed()
    const [described] = (await admin.describeGroups([groupId])).groups
    result.described_stable = {
      state: described.state,
      protocol: described.protocol,
      members: described.members.map(m => ({
        client_id: m.clientId,
        assignment: sorted(AssignerProtocol.MemberAssignment.decode(m.memberAssignment).assignment[topic] || [])
      }))
    }
    result.distinct_seen = new Set([...seen['member-1'], ...seen['member-2']]).size

    await members['member-1'].disconnect() // LeaveGroup: the other member takes every partition
    await waitFor('the remaining member owning every partition', () => assignments['member-2'].length === 4)
    result.after_leave = assignments['member-2']
    await members['member-2'].disconnect()
    result.described_empty = (await admin.describeGroups([groupId])).groups[0].state

    // a new member starts from the commits: it sees only what is produced after them
    const restartSeen = []
    const restarted = await consume(client, topic, { groupId }, (partition, message) =>
      restartSeen.push(`${partition}:${message.offset}:${message.value}`))
    try {
      await producer.send({ topic, messages: [{ partition: 1, value: 'after-restart' }] })
      await waitFor('the new record', () => restartSeen.length > 0)
      result.restart_seen = restartSeen
    } finally {
      await restarted.disconnect()
    }
  } finally {
    for (const consumer of Object.values(members)) await consumer.disconnect()
    await producer.disconnect()
    await admin.disconnect()
  }
  return result
}

// ---- transactions: commit and abort, fencing, consume-transform-produce ----

async function transactions (brokers, [input, output]) {
  const client = kafka(brokers, 'kafkajs-transactions')
  const result = {}
  const transactionalId = `kafkajs-txn-${input}`
  const txProducer = () => client.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 })
  const inTransaction = async (producer, topic, values, commit) => {
    const transaction = await producer.transaction()
    try {
      await transaction.send({ topic, messages: values.map(value => ({ partition: 0, key: 'k', value })) })
    } catch (e) {
      await transaction.abort().catch(() => {})
      throw e
    }
    await (commit ? transaction.commit() : transaction.abort())
  }
  const producer = txProducer()
  await producer.connect()
  await inTransaction(producer, input, ['committed-0', 'committed-1', 'committed-2'], true)
  await inTransaction(producer, input, ['aborted-0', 'aborted-1', 'aborted-2'], false)
  await inTransaction(producer, input, ['committed-3', 'committed-4'], true)
  // a new producer with the same transactional id fences the first one (kafkajs sends its
  // InitProducerId at the producer's first transaction(), not at connect())
  const successor = txProducer()
  await successor.connect()
  const successorTransaction = await successor.transaction()
  try {
    await inTransaction(producer, input, ['from-the-fenced-producer'], true)
    result.fenced_error = null
  } catch (e) {
    result.fenced_error = e.type || e.name
  }
  await successorTransaction.send({ topic: input, messages: [{ partition: 0, key: 'k', value: 'committed-by-successor' }] })
  await successorTransaction.commit()
  await Promise.allSettled([producer.disconnect(), successor.disconnect()])

  const readAll = async (topic, last, readUncommitted) => {
    const values = []
    let lastOffset = null
    const consumer = await consume(client, topic, { groupId: `kafkajs-read-${topic}-${readUncommitted}`, readUncommitted },
      (partition, message) => {
        values.push(message.value.toString())
        lastOffset = Number(message.offset)
      })
    try {
      await waitFor(`${last} read from ${topic}`, () => values.includes(last))
    } finally {
      await consumer.disconnect()
    }
    return { values, lastOffset }
  }
  const [committed, uncommitted] = await Promise.all([false, true].map(readUncommitted =>
    readAll(input, 'committed-by-successor', readUncommitted)))
  result.read_committed = committed.values
  result.read_uncommitted = uncommitted.values

  // consume-transform-produce: the group's offset commits with the output
  const groupId = `kafkajs-ctp-${input}`
  const ctpProducer = client.producer({ transactionalId: groupId, idempotent: true, maxInFlightRequests: 1 })
  await ctpProducer.connect()
  const admin = client.admin()
  await admin.connect()
  try {
    const transaction = await ctpProducer.transaction()
    await transaction.send({ topic: output, messages: committed.values.map(v => ({ partition: 0, value: v.toUpperCase() })) })
    await transaction.sendOffsets({
      consumerGroupId: groupId,
      topics: [{ topic: input, partitions: [{ partition: 0, offset: String(committed.lastOffset + 1) }] }]
    })
    await transaction.commit()
    result.ctp_last_input_offset = committed.lastOffset
    // the offsets become visible once the coordinator wrote the commit markers
    let offsets
    await waitFor('the transaction\'s offsets', async () => {
      [offsets] = await admin.fetchOffsets({ groupId, topics: [input] })
      return Number(offsets.partitions[0].offset) >= 0
    })
    result.ctp_committed = Number(offsets.partitions[0].offset)
  } finally {
    await ctpProducer.disconnect()
    await admin.disconnect()
  }
  result.ctp_output = (await readAll(output, 'COMMITTED-BY-SUCCESSOR', false)).values
  return result
}

// ---- admin: cluster, topics, configs, partitions ----

async function adminScenario (brokers, [topic]) {
  const admin = kafka(brokers, 'kafkajs-admin').admin()
  await admin.connect()
  const result = {}
  try {
    const cluster = await admin.describeCluster()
    result.nodes = cluster.brokers.map(b => ({ id: b.nodeId, host: b.host, port: b.port })).sort((a, b) => a.id - b.id)
    result.controller = cluster.controller
    result.cluster_id = cluster.clusterId
    const spec = {
      topic,
      numPartitions: 3,
      replicationFactor: 3,
      configEntries: [{ name: 'retention.ms', value: '3600000' }, { name: 'min.insync.replicas', value: '2' }]
    }
    result.created = await admin.createTopics({ topics: [spec], waitForLeaders: true })
    result.created_again = await admin.createTopics({ topics: [spec], waitForLeaders: true })
    const partitions = async count => {
      let described
      await waitFor(`${topic} with ${count} partitions`, async () => {
        [described] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics
        return described.partitions.length === count
      })
      return described.partitions.map(p => ({ partition: p.partitionId, leader: p.leader, replicas: p.replicas, isr: p.isr }))
        .sort((a, b) => a.partition - b.partition)
    }
    result.described = await partitions(3)
    const entries = resource => Object.fromEntries(resource.configEntries.map(e =>
      [e.configName, [e.configValue, e.configSource, e.readOnly, e.isSensitive, e.isDefault]]))
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }, { type: ConfigResourceTypes.BROKER, name: '1' }]
    })
    result.topic_configs = entries(described.resources.find(r => r.resourceType === ConfigResourceTypes.TOPIC))
    result.broker_configs = entries(described.resources.find(r => r.resourceType === ConfigResourceTypes.BROKER))
    // AlterConfigs replaces the topic's whole set: min.insync.replicas falls back to its default
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'retention.ms', value: '7200000' }] }]
    })
    const altered = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }] })
    result.altered_configs = entries(altered.resources[0])
    await admin.createPartitions({ topicPartitions: [{ topic, count: 5 }] })
    result.partitions_after_increase = (await partitions(5)).map(p => p.partition)
    result.listed_before_delete = (await admin.listTopics()).includes(topic)
    await admin.deleteTopics({ topics: [topic] })
    await waitFor('the topic gone from listTopics', async () => !(await admin.listTopics()).includes(topic))
  } finally {
    await admin.disconnect()
  }
  return result
}

// ---- a producer whose only bootstrap broker is not the controller, to a topic nobody created ----

async function autocreate (brokers, [topic, nonController]) {
  // kafkajs retries a Metadata answer of LEADER_NOT_AVAILABLE at once, and one of
  // UNKNOWN_TOPIC_OR_PARTITION only by retrying the whole send: its logged errors tell them apart
  const metadataErrors = []
  const client = new Kafka({
    clientId: 'kafkajs-autocreate',
    brokers: [nonController],
    logLevel: logLevel.WARN,
    logCreator: (...args) => {
      const log = logCreator(...args)
      return entry => {
        if (entry.log.message.startsWith('Response Metadata')) metadataErrors.push(entry.log.error)
        log(entry)
      }
    }
  })
  const producer = client.producer({ allowAutoTopicCreation: true })
  await producer.connect()
  try {
    const metadata = await producer.send({ topic, messages: [{ key: 'k', value: 'auto' }] })
    return {
      sent: metadata.map(m => ({ partition: m.partition, offset: Number(m.baseOffset), error: m.errorCode })),
      metadata_errors: metadataErrors
    }
  } finally {
    await producer.disconnect()
  }
}

const SCENARIOS = { produce, group, transactions, admin: adminScenario, autocreate }

async function report (brokers, name, topics) {
  const result = { scenario: name }
  const start = process.hrtime.bigint()
  try {
    Object.assign(result, await SCENARIOS[name](brokers, topics))
  } catch (e) {
    result.error = `${e.name}: ${e.message}${e.type ? ` (${e.type})` : ''}\n${e.stack}`
  }
  result.seconds = Number(process.hrtime.bigint() - start) / 1e9
  process.stdout.write(JSON.stringify(result) + '\n')
}

async function main () {
  const [bootstrap, ...scenarios] = process.argv.slice(2)
  await Promise.all(scenarios.map(arg => {
    const [name, topics] = arg.split(/:(.*)/s)
    return report(bootstrap.split(','), name, topics.split(','))
  }))
}

main().then(() => process.exit(0), e => { console.error(e); process.exit(1) })
